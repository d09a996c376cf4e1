"""Reports: what a run folder shows a person and CI.

* ``markdown``: report.md and the console summary; ``html``: report.html and the nightly index
  (Jinja2 ``templates/``); ``explain``: plain-language explanations of duplicate effects;
  ``junit``: junit.xml; ``plots``: saturation and trend PNGs.
"""
