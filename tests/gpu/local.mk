# The real-GPU suite: written by the GPU-suite work.
