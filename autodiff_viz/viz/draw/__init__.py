"""How a picture is drawn: every renderer reads the look table and the view model, none runs the engine.

- ``look``: the look table (each role's fill, border, dashes, text colour, words) and the font;
- ``layout``, ``graphviz``: where boxes go, and the one Graphviz runner;
- ``dot``, ``boxes``, ``legend``: a graph's DOT text, what its boxes say, its legend;
- ``frames``, ``key``, ``panel``, ``camera``, ``sprites``, ``movie``: an animation's matplotlib frames,
  a box's look at a step and the colour key, the side panel, the window onto a large graph, fast
  frames from sprites, the GIF/MP4 writers;
- ``handout``, ``background``: the printable PDF of an animation's steps, an export's background;
- ``still``, ``png``, ``html``, ``widget``, ``static/``: still SVG and PNG pictures, self-contained HTML,
  the Jupyter widget and its JavaScript and CSS.
"""
