"""The app's pages, one module per page (registered in app/page_list.py); each renders through render()."""
