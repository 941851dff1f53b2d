"""`gpu-doctor fit`: will a model run or train on this machine's GPUs, and what makes it fit.

model_size.py reads MODEL (a count, a config.json, a folder with safetensors), estimate.py turns a workload
into memory parts with their formulas and sources, plan.py compares them with the GPUs and lists what fits.
Pure: no process, no machine; the command hands in the GPUs it found.
"""
