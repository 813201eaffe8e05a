"""The classifier's rules for removal that no undo reaches: a cloud's buckets, projects and
machines, a repository on a forge, infrastructure, a cluster's namespaces, a container host's
volumes and images.

`remote_removal(family, args)` returns the tier-4 reason, or `None`. For the cloud and forge
command-line tools one rule holds: a leading name word that deletes (`delete`, `delete-bucket`,
`destroy`, `terminate-instances`, `rm`, `rb`, `purge`, `uninstall`, `apps:destroy`, …) is tier
4 — a single object as well as a recursive one: the rule errs toward asking. Listing, reading
and copying stay tier 3.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engine_adapter.shell.context import has_long, has_short
from engine_adapter.shell.lexer import Word

__all__ = ["remote_removal"]

_DELETES = re.compile(
    r"(delete|destroy|terminate|purge|remove|rm|rb|rmdir|rmdirs|del|uninstall|un|deregister"
    r"|drop|wipe|erase|prune|cleanup|nuke|teardown)([-_:].*)?", re.IGNORECASE)
# Programs whose leading words name a service, a resource and a verb.
_CLOUDS = frozenset({"aws", "gcloud", "az", "gsutil", "doctl", "hcloud", "linode-cli", "oci",
                     "ibmcloud", "scw", "heroku", "fly", "flyctl", "vercel", "netlify",
                     "firebase", "pulumi", "eksctl", "wrangler", "railway", "supabase", "s3cmd",
                     "gh", "glab", "tea", "helm", "rclone", "mc", "b2", "exo", "civo",
                     "upcloud", "vultr-cli", "aliyun", "tccli", "databricks", "snow", "bq",
                     "cf", "kind", "k3d", "minikube", "terragrunt", "cdk", "sst", "serverless",
                     "sls", "copilot", "amplify", "render", "koyeb", "northflank"})
_LEADING = 6  # how many leading name words may hold the verb (`gcloud compute instances delete`)


def remote_removal(family: str, args: list[Word]) -> str | None:
    """The tier-4 reason for `family ARGS` removing something remote or for good, if it does."""
    rule = _RULES.get(family)
    if rule is not None:
        reason = rule(family, args)
        if reason is not None:
            return reason
    if family in _CLOUDS:
        return _cloud(family, args)
    return None


def _names(args: list[Word]) -> list[Word]:
    """The leading name words of a call, skipping options (and `--opt value` values, roughly:
    a word right after an option is a value unless it looks like a verb)."""
    names: list[Word] = []
    for word in args:
        if word.text.startswith("-"):
            continue
        names.append(word)
        if len(names) >= _LEADING:
            break
    return names


def _cloud(family: str, args: list[Word]) -> str | None:
    if any(w.opaque for w in _names(args)):
        return f"{family} verb known only when it runs"
    for word in _names(args):
        if _DELETES.fullmatch(word.text) or (":" in word.text and any(
                _DELETES.fullmatch(part) for part in word.text.split(":")[1:])):
            return f"{family} {word.text} deletes remote resources for good"
    if family == "aws" and any(w.text == "sync" for w in _names(args)) and has_long(
            args, "--delete"):
        return "aws s3 sync --delete deletes remote files"
    if family == "rclone" and any(w.text in ("sync", "move", "moveto", "bisync")
                                  for w in _names(args)):
        return "rclone sync or move deletes files at one end"
    if family == "gh" and _gh_api_deletes(args):
        return "gh api DELETE removes a remote resource"
    return None


def _gh_api_deletes(args: list[Word]) -> bool:
    if not args or args[0].text != "api":
        return False
    for j, word in enumerate(args):
        text = word.text
        value = None
        if text in ("-X", "--method"):
            value = args[j + 1].text if j + 1 < len(args) else ""
        elif text.startswith("--method="):
            value = text.split("=", 1)[1]
        elif text.startswith("-X") and len(text) > 2:
            value = text[2:]
        if value is not None and value.upper() not in ("GET", "HEAD"):
            return True
    return False


def _operands(args: list[Word], values: frozenset[str]) -> list[str]:
    """The non-option words, lower-cased, without the values of the named options."""
    found: list[str] = []
    skip = False
    for word in args:
        text = word.text
        if skip:
            skip = False
        elif text.startswith("-"):
            skip = text in values
        else:
            found.append(text.lower())
    return found


_KUBE_VALUES = frozenset({"-n", "--namespace", "--context", "-s", "--server", "--kubeconfig",
                          "--cluster", "--user", "--as", "--as-group", "--token", "-l",
                          "--selector", "-o", "--output", "-f", "--filename", "-k",
                          "--kustomize", "--field-selector", "--grace-period", "--timeout"})
_DOCKER_VALUES = frozenset({"-l", "--log-level", "-f", "--file", "-p", "--project-name",
                            "--project-directory", "--env-file", "--profile", "--filter",
                            "--until"})


def _terraform(family: str, args: list[Word]) -> str | None:
    words = [w.text for w in args if not w.text.startswith("-")]
    verb = words[0] if words else ""
    if verb == "destroy":
        return "terraform destroy removes the infrastructure it manages"
    if verb == "apply" and any(w.text.lstrip("-").split("=", 1)[0] == "destroy" for w in args):
        return "terraform apply -destroy removes the infrastructure it manages"
    if verb == "apply" and any(w.text.lstrip("-").split("=", 1)[0] == "auto-approve"
                               for w in args):
        return "terraform apply -auto-approve changes (and may destroy) infrastructure unasked"
    if verb in ("state", "workspace") and len(words) > 1 and words[1] in ("rm", "delete"):
        return f"terraform {verb} {words[1]} forgets or deletes managed infrastructure"
    return None


_KUBE_WIDE = frozenset({"namespace", "namespaces", "ns", "node", "nodes", "no", "pv",
                        "persistentvolume", "persistentvolumes", "pvc",
                        "persistentvolumeclaim", "persistentvolumeclaims", "crd", "crds",
                        "customresourcedefinition", "customresourcedefinitions",
                        "clusterrole", "clusterroles", "clusterrolebinding",
                        "clusterrolebindings", "storageclass", "storageclasses", "sc",
                        "deployment", "deployments", "deploy", "statefulset", "statefulsets",
                        "sts", "all", "project", "projects"})


def _kubectl(family: str, args: list[Word]) -> str | None:
    words = _operands(args, _KUBE_VALUES)
    if not words:
        return None
    if words[0] == "delete":
        kinds = {part for word in words[1:2] for part in re.split(r"[,/]", word)}
        if kinds & _KUBE_WIDE or has_short(args, "flkA") or has_long(
                args, "--all", "--all-namespaces", "--selector", "--field-selector",
                "--filename", "--kustomize", "--force", "--grace-period", "--now",
                "--recursive"):
            return (f"{family} delete removes many or lasting resources (a namespace, volumes, "
                    "--all, a selector or a file)")
    if words[0] in ("replace", "apply") and has_long(args, "--force", "--prune"):
        return f"{family} {words[0]} --force/--prune deletes resources"
    return None


def _docker(family: str, args: list[Word]) -> str | None:
    words = _operands(args, _DOCKER_VALUES)
    if not words:
        return None
    if "prune" in words[:2]:
        return f"{family} {' '.join(words[:2])} deletes every unused container, image or volume"
    if words[0] in ("volume", "secret", "config", "stack", "service") and len(words) > 1 \
            and words[1] in ("rm", "remove"):
        return f"{family} {words[0]} rm deletes it for good"
    if words[0] == "compose":
        if "down" in words[1:2] and (has_short(args, "v") or has_long(args, "--volumes",
                                                                          "--rmi")):
            return f"{family} compose down -v deletes the project's volumes"
        if "rm" in words[1:2] and (has_short(args, "vf") or has_long(args, "--volumes",
                                                                         "--force")):
            return f"{family} compose rm -v deletes the containers' volumes"
    removes = words[0] in ("rm", "rmi") or (
        words[0] in ("container", "image") and len(words) > 1 and words[1] in ("rm", "remove"))
    if removes and (has_short(args, "fv") or has_long(args, "--force", "--volumes")):
        return f"{family} {words[0]} -f/-v removes running containers or their volumes"
    return None


def _compose(family: str, args: list[Word]) -> str | None:
    return _docker(family, [Word("compose", "compose", False), *args])


_RULES: dict[str, Callable[[str, list[Word]], str | None]] = {
    "terraform": _terraform, "terragrunt": _terraform,
    "kubectl": _kubectl, "oc": _kubectl,
    "docker": _docker, "docker-compose": _compose,
}
