"""The peer of `benches/check.rs`'s `pyyaml` mode: what checking a manifest costs with the
tools a Python author already has. PyYAML's C loader reads the manifest, and `jsonschema`
(Draft 2020-12) checks the two schemas and validates every example's input and output against
them: the same reading and the same validations `check` does, less its located diagnostics and
its other checks. Prints the number of validations made, so the bench knows the work was done.

    python3 benches/peers/check.py holon.yaml
"""

import sys

import jsonschema
import yaml


def main(path: str) -> None:
    with open(path, "rb") as f:
        manifest = yaml.load(f, Loader=yaml.CLoader)
    interface = manifest["interface"]
    validator = jsonschema.Draft202012Validator
    validator.check_schema(interface["input"])
    validator.check_schema(interface["output"])
    inputs = validator(interface["input"])
    outputs = validator(interface["output"])
    validated = 0
    for example in manifest["examples"]:
        inputs.validate(example["input"])
        validated += 1
        if "output" in example:
            outputs.validate(example["output"])
            validated += 1
    print(validated)


if __name__ == "__main__":
    main(sys.argv[1])
