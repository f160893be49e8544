# Hardening: written by the hardening work.
