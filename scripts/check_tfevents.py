#!/usr/bin/python3
"""Checks a vit-train run folder's TensorBoard event files against its logs.

    /usr/bin/python3 scripts/check_tfevents.py RUN_DIR

Reads every events.out.tfevents.* file of RUN_DIR in name order, as
TensorBoard does, with a decoder that protoc builds from the .proto files
under scripts/tensorboard/proto (TensorBoard's message and field numbers),
and checks:

  - the TFRecord framing: each record's length and data checksums (masked
    CRC-32C); only a file's last record may be cut short (a run killed
    while writing it), and it is skipped, as TensorBoard skips it;
  - each file's first event is the file version "brain.Event:2";
  - each (tag, step) shows once across all files;
  - the scalars are steps.csv's and epochs.csv's values, rounded to float32:
    steps/FIELD at each row's step, epochs/FIELD at each row's epoch, every
    field but the step (epoch) itself, and none for a NaN cell; when a
    file ends in a cut record, the last row of a log may be missing (the
    run stopped between writing the row and its event);
  - the text summary "config" (text plugin, a DT_STRING tensor) at the
    latest step is config.yaml, as a YAML code block.

Needs protoc (Debian: protobuf-compiler), python3-protobuf and
python3-crc32c. Exits 0 when every check passes, 1 otherwise, printing
what failed; 2 on bad usage or missing tools.
"""

import csv
import glob
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "tensorboard", "proto")
FILE_VERSION = "brain.Event:2"
CONFIG_TAG = "config"
CONFIG_FENCE = ("```yaml\n", "```\n")


class CheckError(Exception):
    pass


def load_protos(tmp):
    """Compiles the .proto files with protoc and imports event_pb2."""
    protos = sorted(glob.glob(os.path.join(PROTO_DIR, "tensorboard", "compat", "proto", "*.proto")))
    if not protos:
        raise SystemExit(f"check_tfevents: no .proto files under {PROTO_DIR}")
    if shutil.which("protoc") is None:
        raise SystemExit("check_tfevents: protoc is not installed (Debian: apt-get install protobuf-compiler)")
    subprocess.run(["protoc", f"--python_out={tmp}", f"-I{PROTO_DIR}", *protos], check=True)
    sys.path.insert(0, tmp)
    from tensorboard.compat.proto import event_pb2, types_pb2  # noqa: E402

    return event_pb2, types_pb2


def masked_crc(data):
    import crc32c

    c = crc32c.crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def records(path):
    """Yields (offset, data) for each whole record of a TFRecord file, and
    (offset, None) for a cut last record."""
    with open(path, "rb") as f:
        raw = f.read()
    off = 0
    while off < len(raw):
        rest = raw[off:]
        if len(rest) < 12:
            yield off, None
            return
        (length,) = struct.unpack("<Q", rest[:8])
        (crc,) = struct.unpack("<I", rest[8:12])
        if crc != masked_crc(rest[:8]):
            raise CheckError(f"{path}: record at offset {off}: the length checksum {crc:#010x} is not the bytes' {masked_crc(rest[:8]):#010x}")
        if len(rest) < 16 + length:
            yield off, None
            return
        data = rest[12 : 12 + length]
        (crc,) = struct.unpack("<I", rest[12 + length : 16 + length])
        if crc != masked_crc(data):
            raise CheckError(f"{path}: record at offset {off}: the data checksum {crc:#010x} is not the bytes' {masked_crc(data):#010x}")
        yield off, data
        off += 16 + length


def read_events(run_dir, event_pb2, types_pb2):
    """Reads the run's event files: scalars and texts by (tag, step), and
    the paths of the files that end in a cut record."""
    files = sorted(glob.glob(os.path.join(run_dir, "events.out.tfevents.*")))
    if not files:
        raise CheckError(f"{run_dir}: no events.out.tfevents.* file")
    scalars, texts, cut = {}, {}, []
    for path in files:
        first = True
        for off, data in records(path):
            if data is None:
                cut.append(f"{path} at offset {off}")
                break
            event = event_pb2.Event.FromString(data)
            if first:
                if event.WhichOneof("what") != "file_version" or event.file_version != FILE_VERSION:
                    raise CheckError(f"{path}: the first event is not the file version {FILE_VERSION!r}: {event}")
                first = False
                continue
            if event.WhichOneof("what") != "summary":
                raise CheckError(f"{path}: record at offset {off} holds no summary: {event}")
            for v in event.summary.value:
                key = (v.tag, event.step)
                if key in scalars or key in texts:
                    raise CheckError(f"{path}: tag {v.tag!r} at step {event.step} shows twice")
                kind = v.WhichOneof("value")
                if kind == "simple_value":
                    scalars[key] = v.simple_value
                elif kind == "tensor" and v.metadata.plugin_data.plugin_name == "text":
                    t = v.tensor
                    if t.dtype != types_pb2.DT_STRING or len(t.string_val) != 1 or len(t.tensor_shape.dim) != 0:
                        raise CheckError(f"{path}: text {v.tag!r} at step {event.step} is not one string: {t}")
                    texts[key] = t.string_val[0].decode("utf-8")
                else:
                    raise CheckError(f"{path}: tag {v.tag!r} at step {event.step} is neither a scalar nor a text")
    return files, scalars, texts, cut


def read_log(run_dir, name, key):
    """Reads NAME.csv into rows of (step, {tag: value}); NaN cells are left
    out of the values."""
    path = os.path.join(run_dir, name + ".csv")
    if not os.path.exists(path):
        return []
    rows = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            step = float(row[key])
            if step != int(step):
                raise CheckError(f"{path}: {key} {row[key]} is not a whole number")
            values = {}
            for col, cell in row.items():
                if col == key:
                    continue
                v = float(cell)
                if not math.isnan(v):
                    values[f"{name}/{col}"] = v
            rows.append((int(step), values))
    return rows


def float32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def check_scalars(run_dir, scalars, cut):
    """Compares the scalars with the logs' rows; returns the values compared."""
    expected = {}
    optional = set()
    for name, key in (("steps", "step"), ("epochs", "epoch")):
        rows = read_log(run_dir, name, key)
        for i, (step, values) in enumerate(rows):
            for tag, v in values.items():
                expected[(tag, step)] = v
                if cut and i == len(rows) - 1:
                    optional.add((tag, step))
    missing = sorted(set(expected) - set(scalars) - optional)
    extra = sorted(set(scalars) - set(expected))
    problems = []
    if missing:
        problems.append(f"{len(missing)} logged values have no event, e.g. {missing[:5]}")
    if extra:
        problems.append(f"{len(extra)} scalar events are in no log row, e.g. {extra[:5]}")
    compared = 0
    for key, got in scalars.items():
        if key not in expected:
            continue
        want = expected[key]
        compared += 1
        if not (got == float32(want) or math.isclose(got, want, rel_tol=2**-23, abs_tol=0)):
            problems.append(f"{key[0]} at step {key[1]}: event {got!r}, log {want!r}")
    if problems:
        raise CheckError(f"{run_dir}: scalars differ from steps.csv and epochs.csv:\n  " + "\n  ".join(problems[:20]))
    return compared


def check_config(run_dir, texts):
    configs = sorted((step, text) for (tag, step), text in texts.items() if tag == CONFIG_TAG)
    if not configs:
        raise CheckError(f"{run_dir}: no {CONFIG_TAG!r} text summary")
    with open(os.path.join(run_dir, "config.yaml"), encoding="utf-8") as f:
        want = CONFIG_FENCE[0] + f.read() + CONFIG_FENCE[1]
    step, got = configs[-1]
    if got != want:
        raise CheckError(f"{run_dir}: the {CONFIG_TAG!r} text at step {step} is not config.yaml as a YAML block:\n{got}")
    return len(configs)


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    run_dir = argv[1]
    try:
        import crc32c  # noqa: F401
        import google.protobuf  # noqa: F401
    except ImportError as e:
        print(f"check_tfevents: {e} (Debian: apt-get install python3-protobuf python3-crc32c; run /usr/bin/python3)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        event_pb2, types_pb2 = load_protos(tmp)
        try:
            files, scalars, texts, cut = read_events(run_dir, event_pb2, types_pb2)
            compared = check_scalars(run_dir, scalars, cut)
            configs = check_config(run_dir, texts)
        except CheckError as e:
            print(f"check_tfevents: FAIL: {e}", file=sys.stderr)
            return 1
    print(f"check_tfevents: {run_dir}: {len(files)} event files, {compared} scalars equal to steps.csv and epochs.csv, "
          f"{configs} config texts (the latest equal to config.yaml), each (tag, step) once"
          + (f"; a cut last record skipped in {', '.join(cut)}" if cut else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
