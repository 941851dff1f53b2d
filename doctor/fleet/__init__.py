"""Fleets: post-install gates (`verify`), report comparison (`diff`), fleet tables (`summarize`).

Pure modules over a Report or over the JSON envelopes other machines wrote; the commands that read files and
print live in doctor/{verify,diff,summarize}_command.py, the command-line options in `arguments.py`.
"""
