#!/bin/sh
# The project's tests.
python3 -m pytest -q
