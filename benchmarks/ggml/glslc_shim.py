#!/usr/bin/env python3
"""A glslc-compatible front for glslang's standalone compiler: enough of glslc's command line for ggml's build.

ggml's CMake (feature tests) and vulkan-shaders-gen call `glslc` as
    glslc -fshader-stage=compute --target-env=vulkan1.X IN -o OUT [-O] [-MD -MF DEPFILE] [-g] [-DNAME=VAL ...]
    glslc -o - -fshader-stage=compute --target-env=vulkan1.3 IN        (feature test: SPIR-V on stdout)
This runs `$GLSLANG -V --target-env ... -S comp` instead. glslc enables `#include` by default and glslang
does not, so the shim adds `#extension GL_GOOGLE_include_directive : enable` as glslang preamble text (as
shaderc does). `-O` is ignored (glslang was built without spirv-opt; ggml already skips it for coopmat
shaders). ggml treats any stderr output as a failed compile, so glslang's stdout (the file name, warnings)
is swallowed unless the compile fails.
"""
import os
import subprocess
import sys
import tempfile

GLSLANG = os.environ.get("GLSLANG") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "glslang")


def main(argv):
    out = inp = depfile = None
    env = "vulkan1.2"
    extra = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-o", "-MF"):
            if a == "-o":
                out = argv[i + 1]
            else:
                depfile = argv[i + 1]
            i += 2
            continue
        if a.startswith("--target-env="):
            env = a.split("=", 1)[1]
        elif a.startswith("-D") or a.startswith("-I"):
            extra.append(a)
        elif a == "-g":
            extra.append("-g")
        elif a.startswith("-"):
            pass  # -O, -MD, -fshader-stage=compute: nothing to do
        else:
            inp = a
        i += 1
    if inp is None:
        print("glslc shim: no input", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="glslc-shim-") as tmpd:
        res = os.path.join(tmpd, "out.spv") if out in (None, "-") else out
        dep = os.path.join(tmpd, "out.d")
        cmd = [GLSLANG, "-V", "--target-env", env, "-S", "comp",
               "-P#extension GL_GOOGLE_include_directive : enable",
               "-I" + os.path.dirname(os.path.abspath(inp)), "-o", res]
        if depfile:
            cmd += ["--depfile", dep]
        cmd += extra + [inp]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.stderr.write(p.stdout + p.stderr)
            return 1
        if out in (None, "-"):
            with open(res, "rb") as f:
                sys.stdout.buffer.write(f.read())
        if depfile:
            # glslang writes "OUT: IN INCLUDES..."; keep it (ggml rewrites OUT to its .cpp target)
            with open(dep) as f, open(depfile, "w") as g:
                g.write(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
