#!/bin/sh
# build/embed.sh: GN action wrapper: run the host bin2c (first argument) with the rest.
exec "$@"
