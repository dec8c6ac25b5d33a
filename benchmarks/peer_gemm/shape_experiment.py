"""Code-shape experiment on the peer's harness: the same kernel in several SPIR-V forms, interleaved.

    python benchmarks/peer_gemm/shape_experiment.py --harness SRC --vulkan-headers INC [--types fp16_fp32]
        [--rounds 2] [--out docs/benchmarks.md]

For each type pair it times, with vk_cooperative_matrix_perf's own harness (``--shmem``, 8192^3, built as
``run_peer.py`` builds it), these forms of ``shmem<A>_<C>.spv`` (with ``--kernel workgroup``: of
``workgroup<A>_<C>.spv``, the harness run without ``--shmem``, and ``workgroup.FORMS`` for ``--ours-form``):

* ``theirs``: the peer's glslang output; ``ours``: ``benchmarks/peer_gemm/shmem.py`` (its default forms);
* ``theirs+mem2reg``: theirs after spirv-opt's local-variable-to-SSA passes (the form coopdsl writes: SSA
  values and phis instead of Function variables);
* ``theirs+private-to-local``: theirs with its Private accumulator array made a Function variable (where
  coopdsl keeps it), and ``theirs+p2l+mem2reg`` both;
* ``theirs -O`` and ``ours -O``: spirv-opt's performance recipe;
* ``ours+wg-builtin``: ours with glslang's workgroup-size form (``LocalSize 1 1 1`` and a
  ``WorkgroupSize``-decorated spec-constant composite) instead of ``LocalSizeId``;
* with ``--spv-form LABEL=PATH``: any other module, e.g. the peer's GLSL changed by hand and compiled with
  glslang as its ``compile.bat`` does (to move theirs toward ours one difference at a time);
* with ``--ours-form LABEL=FORM,FORM``: ours built by coopdsl in those code-shape forms of
  ``benchmarks/peer_gemm/shmem.py`` (``shmem.FORMS``, e.g. ``func``: every offset through a device
  function, as the GLSL's ``coordToOffset``).

``--only`` limits the run to the named configurations (the harness build skips the others before setting
up their buffers; shaders, dispatch and timing are unchanged). Every form is validated with spirv-val
first. Rounds alternate the order. The table gives each form's median TFLOP/s per configuration; it shows
which differences between the two modules the driver's compiler is sensitive to.
"""

from __future__ import annotations

import argparse
import datetime
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.peer_gemm.run_peer import build, only_value, parse, run  # noqa: E402
from coopdsl.spirv import tools  # noqa: E402

OPT = {"theirs+mem2reg": ["--eliminate-local-single-block", "--eliminate-local-single-store", "--ssa-rewrite"],
       "theirs+private-to-local": ["--private-to-local"],
       "theirs+p2l+mem2reg": ["--private-to-local", "--eliminate-local-single-block",
                              "--eliminate-local-single-store", "--ssa-rewrite"],
       "theirs -O": ["-O"], "ours -O": ["-O"]}


def workgroup_size_builtin(binary: bytes) -> bytes:
    """``binary`` with ``OpExecutionModeId LocalSizeId x y z`` replaced by glslang's form."""
    text = tools.disassemble(binary)
    m = re.search(r"OpExecutionModeId (%\w+) LocalSizeId (%\w+) (%\w+) (%\w+)\n", text)
    if m is None:
        raise ValueError("the module has no LocalSizeId execution mode")
    v3 = re.search(r"(%\w+) = OpTypeVector %uint 3\n", text)
    if v3 is None:
        raise ValueError("the module has no uint3 type")
    entry, x, y, z = m.groups()
    lines = text.replace(m.group(0), f"OpExecutionMode {entry} LocalSize 1 1 1\n").splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if re.search(r"= Op(SpecConstant|Constant|Type)", line))
    lines.insert(last + 1, f"%wg_builtin = OpSpecConstantComposite {v3.group(1)} {x} {y} {z}\n")
    lines.insert(next(i for i, line in enumerate(lines) if "OpDecorate" in line),
                 "OpDecorate %wg_builtin BuiltIn WorkgroupSize\n")
    return tools.assemble("".join(lines), "vulkan1.3")


def forms(theirs: bytes, ours: bytes, opt: dict[str, list[str]] | None = None) -> dict[str, bytes]:
    """Every form of the experiment, validated; ``opt`` (label -> spirv-opt arguments, applied to ours when
    the label starts with "ours", else to theirs) replaces :data:`OPT` and the workgroup-size form."""
    out = {"theirs": theirs, "ours": ours}
    if opt is None:
        out["ours+wg-builtin"] = workgroup_size_builtin(ours)
    for name, passes in (OPT if opt is None else opt).items():
        out[name] = tools.optimize(ours if name.startswith("ours") else theirs, passes, "vulkan1.3")
    for name, binary in out.items():
        message = tools.validation_message(binary, "vulkan1.3")
        if message is not None:
            raise SystemExit(f"{name}: spirv-val rejects it: {message}")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--harness", type=Path, required=True, help="a checkout of jeffbolznv/vk_cooperative_matrix_perf")
    p.add_argument("--vulkan-headers", type=Path, required=True, help="the include folder of Vulkan-Headers")
    p.add_argument("--types", nargs="+", default=["fp16_fp32"])
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "peer_shapes")
    p.add_argument("--form", action="append", default=[], metavar="LABEL=PASS,PASS",
                   help="time this spirv-opt form instead of the default ones (repeatable), e.g. "
                        "'theirs+inline=--inline-entry-points-exhaustive,--eliminate-dead-functions'")
    p.add_argument("--forms-file", type=Path, help="more --form values, one a line")
    p.add_argument("--ours-form", action="append", default=[], metavar="LABEL=FORM,FORM",
                   help="also time ours built in these shmem.FORMS (repeatable), e.g. 'ours+func=func'")
    p.add_argument("--spv-form", action="append", default=[], metavar="LABEL=PATH",
                   help="also time this module (repeatable; e.g. the peer's GLSL changed by hand and compiled "
                        "with glslang as its compile.bat does: nothing of the peer is kept in this repository)")
    p.add_argument("--only", nargs="+", default=[], metavar="lMxlNxlK:TILE_MxTILE_N:BColMajor",
                   help="run only these configurations (e.g. 16x8x16:256x128:0); the others are skipped "
                        "before their buffers are set up")
    p.add_argument("--kernel", choices=["shmem", "workgroup"], default="shmem",
                   help="which of the peer's kernels (workgroup: its coopmat2 kernel, with workgroup.FORMS)")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    if args.forms_file:
        args.form += [line.strip() for line in args.forms_file.read_text().splitlines() if line.strip()]
    opt = {label: passes.split(",") for label, passes in (f.split("=", 1) for f in args.form)}
    if not opt and not args.ours_form and not args.spv_form:
        opt = None  # the default forms
    from benchmarks._gpu import require_gpu
    from benchmarks.peer_gemm import shmem, workgroup

    port = shmem if args.kernel == "shmem" else workgroup
    kern = args.kernel

    only = only_value(args.only)
    device = require_gpu("shape_experiment.py")
    exe = build(args.harness, args.vulkan_headers.resolve(), args.work / "build", True)
    ours_dir = args.work / "ours"
    ours_dir.mkdir(parents=True, exist_ok=True)
    port.emit_all(ours_dir)
    lines = []
    for t in args.types:
        theirs = (args.harness / "shaders" / f"{kern}{t}.spv").read_bytes()
        variants = forms(theirs, (ours_dir / f"{kern}{t}.spv").read_bytes(), opt)
        for label, names_ in (f.split("=", 1) for f in args.ours_form):
            chosen = [n for n in names_.split(",") if n]  # 'LABEL=' builds the port with no form at all
            variants[label] = port.variant(*port.VARIANTS[tuple(t.split("_"))], chosen).compile()
        for label, path in (f.split("=", 1) for f in args.spv_form):
            binary = Path(path).read_bytes()
            message = tools.validation_message(binary, "vulkan1.3")
            if message is not None:
                raise SystemExit(f"{label}: spirv-val rejects {path}: {message}")
            variants[label] = binary
        names = list(variants)
        results: dict[tuple, dict[str, list[float]]] = {}
        for r in range(args.rounds):
            for name in (names if r % 2 == 0 else names[::-1]):
                folder = args.work / re.sub(r"\W", "_", name)
                shaders = folder / "shaders"
                shutil.rmtree(shaders, ignore_errors=True)
                shaders.mkdir(parents=True)
                (shaders / f"{kern}{t}.spv").write_bytes(variants[name])
                got = parse(run(exe, folder, 8192, False, kern, only=only))
                for key, value in got.items():
                    results.setdefault(key, {}).setdefault(name, []).append(value)
                print(t, name, "round", r, " ".join(f"{k[1]}x{k[2]}:{k[4]}={v}" for k, v in got.items()), flush=True)
        lines += ["", f"{t}, TFLOP/s (TOP/s), median of {args.rounds} rounds:", "",
                  "| tiles | TILE_M x TILE_N x TILE_K | B col-major | " + " | ".join(names) + " |",
                  "|---" * (len(names) + 3) + "|"]
        for key, per in sorted(results.items()):
            cells = [f"{statistics.median(per[n]):.1f}" if n in per else "-" for n in names]
            lines.append(f"| {key[0]} | {key[1]}x{key[2]}x{key[3]} | {key[4]} | " + " | ".join(cells) + " |")
    info = device.info
    head = [f"Date: {datetime.date.today()}. Machine: {info.name}, driver {info.driver_name} {info.driver_info}.", "",
            "Command: `python benchmarks/peer_gemm/shape_experiment.py --harness SRC --vulkan-headers INC "
            + ("--kernel workgroup " if kern == "workgroup" else "")
            + f"--types {' '.join(args.types)} --rounds {args.rounds}" + "".join(f" --form '{f}'" for f in args.form)
            + "".join(f" --ours-form '{f}'" for f in args.ours_form)
            + "".join(f" --spv-form '{f}'" for f in args.spv_form)
            + (f" --only {' '.join(args.only)}" if args.only else "")
            + " --out docs/benchmarks.md` (forms: see the script's docstring)."]
    print("\n".join(head + lines))
    if args.out:
        from benchmarks._report import replace_section

        heading = "## Peer harness: which code-shape differences the driver reacts to (H100)"
        if kern == "workgroup":
            heading = heading.replace("(H100)", "(H100), workgroup kernel")
        if opt is not None:
            heading += ": " + ", ".join([*opt, *(f.split("=", 1)[0] for f in args.ours_form + args.spv_form)])
        replace_section(args.out, heading, "\n".join(head + lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
