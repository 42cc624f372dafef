"""`python -m costmodel` runs the CLI."""

from costmodel.cli import main

raise SystemExit(main())
