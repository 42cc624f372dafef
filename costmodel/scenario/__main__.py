"""`python -m costmodel.scenario`: regenerate docs/scenario.schema.json."""

from costmodel.scenario.model import write_scenario_json_schema

if __name__ == "__main__":
    print(f"wrote {write_scenario_json_schema()}")
