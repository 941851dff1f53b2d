"""Measurements on the live machine: RAM bandwidth, disk read speed, free space.

Unlike facts, these cannot go through the Host seam (they time real copies and real reads), so they run only
on the machine being diagnosed, never on a capture; each is bounded in time and never raises for the
expected OS errors: the result says why it has no number.
"""
