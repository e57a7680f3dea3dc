"""Pipeline stages: each module adapts one library step to `dnabird run` and exposes `STAGE`."""
