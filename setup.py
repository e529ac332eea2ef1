"""Packaging beside pyproject.toml, for what a static file cannot say: the packages are found,
not listed (every folder of explorer/ with an __init__.py, so a new mechanism's folder ships
with no line here), and the repository's assets/ ship inside the package as explorer._assets,
where explorer.resources finds them in an installed package."""

from setuptools import find_packages, setup

ASSETS = {"explorer._assets": "assets", "explorer._assets.texts": "assets/texts",
          "explorer._assets.maps": "assets/maps", "explorer._assets.mqar": "assets/mqar"}

setup(packages=[*find_packages(include=["explorer", "explorer.*"]), *ASSETS], package_dir=ASSETS)
