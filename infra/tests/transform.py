"""Transforms infra/template.yaml with the SAM translator, offline, and prints the result as JSON.

Run by crates/api/tests/infra_template.rs. CodeUri is replaced by an s3:// location first (as
`sam package` would), and the managed-policy loader answers from nothing, so no AWS call is made.
"""

import json
import os
import sys

from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse


class NoManagedPolicies:
    def load(self):
        return {}


def main():
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
    with open(sys.argv[1], encoding="utf-8") as f:
        template = yaml_parse(f.read())
    template.setdefault("Globals", {}).setdefault("Function", {})["CodeUri"] = "s3://kakeibo-build/functions.zip"
    transformed = transform(template, {}, NoManagedPolicies())
    print(json.dumps(transformed))


main()
