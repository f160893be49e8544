# make bench: written by the benchmark work.
