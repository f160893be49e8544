#!/bin/sh
# Regenerates configure and the Makefile templates from a fresh clone.
set -e
cd "$(dirname "$0")"
autoreconf -fi
