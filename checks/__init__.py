"""Built-in checks: pure functions from Facts to Findings, one module per area.

The modules are listed explicitly in torch_gpu_doctor.registry.BUILTIN_CHECK_MODULES.
"""
