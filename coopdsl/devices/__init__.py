"""Device-aware checks: does a device offer the cooperative matrices a kernel uses?

    import coopdsl as cd
    gemm.compile(device="nvidia-h100")                      # CompileError at the line the H100 lacks
    cd.devices.verify(gemm.reflect(), "profile.json")       # the same check on reflection data
    TM, TN, TK = cd.devices.best_shape("nvidia-h100", a=cd.f16, c=cd.f32)

Profiles are ``coopdsl devices --json`` output; some ship with coopdsl
(:func:`shipped_profiles`).  The runtime runs the same check against the live
device before it creates a pipeline.  See docs/devices.md.  The checks
(``verify``, ``mismatches``) load on first use: compiling a kernel without a
device (reflection needs only ``devices.dims``) does not pay for them.
"""

from .._lazy import lazy_exports
from .profile import Config, DeviceProfile, ProfileError, load_profile, shipped_profiles
from .shapes import NoShapeError, best_shape, shapes

__getattr__ = lazy_exports(__name__, {name: ".check" for name in
                                      ("DeviceMismatchError", "Mismatch", "mismatches", "verify")})

__all__ = ["DeviceProfile", "Config", "load_profile", "shipped_profiles", "ProfileError", "mismatches", "verify",
           "Mismatch", "DeviceMismatchError", "best_shape", "shapes", "NoShapeError"]
