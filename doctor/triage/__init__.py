"""`gpu-doctor triage`: the text of `python -m torch.utils.collect_env`, as pasted into a bug report, turned
into partial Facts and judged by the checks that such a report can decide."""
