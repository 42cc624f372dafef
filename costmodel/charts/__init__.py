"""The data behind each app page (roofline, compare, latency): plain arrays and frozen results that the app
draws with plotly and the memo with matplotlib. Charts render decision results; they never print."""
