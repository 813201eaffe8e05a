"""`GrantStore`: the saved grants and deny rules one run may use, kept outside its workspace.

Two files in the user's grants folder (the cockpit passes `<config dir>/grants`):
`user.toml` (grants for every project) and `projects/<name>-<hash>.toml` (one project's; the
file records the project's path and is read only for exactly that path). A project is the
directory a run works in, by its canonical real path: a grant for `/a` never applies in
`/a-other`, nor in a path that reaches `/a` through a symbolic link (such a run gets no project
grants and is told why).

Nothing under the workspace is ever a grant source: if the grants folder itself lies inside the
workspace (a run in the home directory, say), saved grants are off for that run, since the agent
could write them; the same for one scope whose file a symbolic link (`projects/` pointing into
a repository, say) puts inside the workspace. Deny rules are read from both files and apply to
every call, whatever scope allowed it.

Reading never fails (problems are listed in `problems`); changing a file raises
`GrantFileError` with one line for the user. The methods that touch the disk block: the Session
calls them in a worker thread.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from engine_adapter.grants.deny import runs_prefix
from engine_adapter.grants.grant_file import (
    GrantFile,
    GrantFileError,
    file_stamp,
    read_grant_file,
    update_grant_file,
)
from engine_adapter.grants.records import (
    SAVED_SCOPES,
    DenyRule,
    SavedGrant,
    Scope,
    deny_words,
    new_id,
    now,
    prefix_problem,
    rule_covers_tool,
    text_problem,
    tool_problem,
)

__all__ = ["GrantStore", "project_identity"]

Entry = SavedGrant | DenyRule


def project_identity(path: str | os.PathLike[str]) -> tuple[str | None, str | None]:
    """`(canonical path, None)` for a project directory, or `(None, why it has none)`: it does
    not exist, or it is reached through a symbolic link (only the real path names a project)."""
    absolute = os.path.abspath(path)
    real = os.path.realpath(path)
    if not os.path.isdir(real):
        return None, f"{absolute} is not a directory"
    if absolute != real:
        return None, (f"{absolute} is reached through a symbolic link; project grants apply "
                      f"only when the run is in {real} itself")
    return real, None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class GrantStore:
    """The user's and one project's saved grants and deny rules.

    Args:
        directory: The grants folder (outside any workspace: see the module docstring).
        project: The directory the run works in (its project), or None for no project.
        workspace: Where the agent may write (default: `project`); a grants folder inside it
            is never read.
    """

    def __init__(self, directory: str | os.PathLike[str], *,
                 project: str | os.PathLike[str] | None = None,
                 workspace: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory)
        self.project: str | None = None
        self.off: str | None = None  # why saved grants are off entirely
        self.project_off: str | None = "this run names no project"
        self._lock = threading.RLock()
        self._files: dict[Scope, GrantFile] = {}
        self._used: dict[str, datetime] = {}  # last uses not yet written
        self._listeners: list[Callable[[], Any]] = []
        folder = os.path.realpath(self.directory)
        guard = workspace if workspace is not None else project
        if guard is not None and _inside(folder, os.path.realpath(guard)):
            self.off = (f"saved grants are off: their folder {self.directory} is inside the "
                        f"workspace {os.path.abspath(guard)}, where the agent can write")
        if project is not None:
            self.project, why = project_identity(project)
            self.project_off = None if why is None else f"no project grants: {why}"
        self._scope_off: dict[Scope, str] = {}  # a scope whose file a link puts in the workspace
        if guard is not None and self.off is None:
            real_guard = os.path.realpath(guard)
            for scope in SAVED_SCOPES:
                path = self.path(scope)
                if path is not None and _inside(os.path.realpath(path.parent), real_guard):
                    self._scope_off[scope] = (
                        f"saved {scope} grants are off: {path.parent} leads into the workspace "
                        f"{os.path.abspath(guard)}, where the agent can write")
        self.reload()

    # where -------------------------------------------------------------------------------------
    def path(self, scope: Scope) -> Path | None:
        """The file of a saved scope (None: the scope has no file for this run)."""
        if scope == "user":
            return self.directory / "user.toml"
        if scope == "project" and self.project is not None:
            digest = hashlib.sha256(self.project.encode("utf-8", "surrogateescape")).hexdigest()
            name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(self.project))[:40] or "root"
            return self.directory / "projects" / f"{name}-{digest[:16]}.toml"
        return None

    def unavailable(self, scope: Scope) -> str | None:
        """Why a grant cannot be saved (or read) in `scope` for this run; None if it can."""
        if scope == "session":
            return None
        if scope not in SAVED_SCOPES:
            return f"unknown scope {scope!r}: session, project or user"
        if self.off is not None:
            return self.off
        if scope in self._scope_off:
            return self._scope_off[scope]
        if scope == "project":
            return self.project_off
        return None

    # reading -----------------------------------------------------------------------------------
    def reload(self) -> None:
        """Read both files again."""
        files: dict[Scope, GrantFile] = {}
        for scope in SAVED_SCOPES:
            path = self.path(scope)
            if path is None or self.unavailable(scope) is not None:
                continue
            files[scope] = read_grant_file(path, scope, self.project if scope == "project"
                                           else None)
        with self._lock:
            self._files = files

    def stale(self) -> bool:
        """Whether a file changed on disk since it was read (another cockpit wrote it). Cheap:
        one `lstat` a file."""
        with self._lock:
            files = dict(self._files)
        return any(file_stamp(found.path) != found.stamp for found in files.values())

    def refresh(self) -> bool:
        """Read again the files that changed on disk; True if any did."""
        if not self.stale():
            return False
        self.reload()
        self._changed()
        return True

    @property
    def problems(self) -> list[str]:
        """One line each: why saved grants are off, broken files, ignored entries."""
        with self._lock:
            files = list(self._files.values())
        found = [self.off] if self.off else list(self._scope_off.values())
        for f in files:
            if f.broken:
                found.append(f"{f.broken} (its grants are not used)")
            found.extend(f.problems)
        return found

    def grants(self) -> list[SavedGrant]:
        """The grants in force: this project's, then the user's (the last use applied)."""
        with self._lock:
            files = [self._files[s] for s in ("project", "user") if s in self._files]
            saved = [g for f in files for g in f.grants.values()]
            used = dict(self._used)
        return [g.used(used[g.id]) if g.id in used else g for g in saved]

    def denies(self) -> list[DenyRule]:
        """The deny rules in force (both files)."""
        with self._lock:
            files = list(self._files.values())
            used = dict(self._used)
        rules = [d for f in files for d in f.denies.values()]
        return [d.used(used[d.id]) if d.id in used else d for d in rules]

    def match(self, tool: str, prefix: str, tier: int) -> SavedGrant | None:
        """The saved grant that allows a call with this grant prefix and tier, if any (the
        project's first). The call's own verdict must say it is grantable: see the gate."""
        for grant in self.grants():
            if grant.scope in SAVED_SCOPES and grant.as_grant().matches(tool, prefix, tier):
                return grant
        return None

    def deny_for(self, tool: str, tool_input: Mapping[str, Any]) -> DenyRule | None:
        """The deny rule this call runs into, if any."""
        for rule in self.denies():
            if rule_covers_tool(rule.tool, tool) and runs_prefix(tool_input, rule.words):
                return rule
        return None

    # changing ----------------------------------------------------------------------------------
    def add_grant(self, scope: Scope, tool: str, prefix: str, tier: int,
                  note: str = "") -> SavedGrant:
        """Save a new grant in `scope` (blocking); in force once written. Raises
        `GrantFileError` if the scope is not available, the grant is not one the rules give,
        or the file cannot be written."""
        why = self.unavailable(scope) or (None if scope in SAVED_SCOPES
                                          else "session grants are not saved")
        problem = why or tool_problem(tool, allow_any=False) or prefix_problem(tool, prefix) \
            or (None if type(tier) is int and 1 <= tier <= 3
                else "tier 4 is never granted") or text_problem(note, "note", 1_000)
        if problem is not None:
            raise GrantFileError(problem)
        made: list[SavedGrant] = []

        def add(found: GrantFile) -> None:
            same = next((g for g in found.grants.values() if (g.tool, g.prefix, g.max_tier)
                         == (tool, prefix, tier)), None)
            grant = same or SavedGrant(id=new_id("g", found.ids()), scope=scope, tool=tool,
                                       prefix=prefix, max_tier=tier, created=now(), note=note)
            found.grants[grant.id] = grant
            made.append(grant)

        self._update(scope, add)
        return made[0]

    def add_deny(self, scope: Scope, tool: str, prefix: str, note: str = "") -> DenyRule:
        """Save a deny rule in `scope` (blocking); in force at once."""
        words = deny_words(prefix)
        problem = (self.unavailable(scope) or (None if scope in SAVED_SCOPES
                                               else "deny rules are saved: project or user")
                   or tool_problem(tool, allow_any=True)
                   or (words if isinstance(words, str) else None)
                   or text_problem(note, "note", 1_000))
        if problem is not None:
            raise GrantFileError(problem)
        made: list[DenyRule] = []

        def add(found: GrantFile) -> None:
            rule = DenyRule(id=new_id("d", found.ids()), scope=scope, tool=tool,
                            prefix=" ".join(words), created=now(), note=note)
            found.denies[rule.id] = rule
            made.append(rule)

        self._update(scope, add)
        return made[0]

    def revoke(self, entry_id: str) -> Entry:
        """Remove a grant or deny rule by id, from whichever file holds it (blocking)."""
        self.refresh()  # another cockpit may have added it since this one read the files
        with self._lock:
            scopes = [s for s, f in self._files.items() if entry_id in f.ids()]
        if not scopes:
            raise GrantFileError(f"no saved grant or deny rule has the id {entry_id!r}")
        removed: list[Entry] = []

        def drop(found: GrantFile) -> None:
            for table in (found.grants, found.denies, found.ignored):
                entry = table.pop(entry_id, None)
                if entry is not None:
                    removed.append(entry)

        self._update(scopes[0], drop)
        if not removed:
            raise GrantFileError(f"{entry_id} was already removed")
        return removed[0]

    def clear(self, scope: Scope) -> int:
        """Remove every allow grant of a saved scope (deny rules stay); how many went."""
        why = self.unavailable(scope)
        if why is not None or scope not in SAVED_SCOPES:
            raise GrantFileError(why or "only saved scopes are cleared: project or user")
        count: list[int] = []

        def drop(found: GrantFile) -> None:
            ignored = [i for i, e in found.ignored.items() if isinstance(e, SavedGrant)]
            count.append(len(found.grants) + len(ignored))
            found.grants.clear()
            for entry_id in ignored:
                del found.ignored[entry_id]

        self._update(scope, drop)
        return count[0]

    def record_use(self, entry: Entry) -> None:
        """Note that `entry` just allowed or denied a call (written by `save_usage`)."""
        with self._lock:
            self._used[entry.id] = now()

    def has_unsaved_usage(self) -> bool:
        """Whether `record_use` noted uses that `save_usage` has not written yet."""
        with self._lock:
            return bool(self._used)

    def save_usage(self) -> None:
        """Write the last uses noted so far into the files (blocking; merged with what other
        cockpits wrote meanwhile)."""
        with self._lock:
            used, self._used = self._used, {}
        for scope in list(self._files):
            def touch(found: GrantFile) -> None:
                grants, denies = found.grants, found.denies
                for entry_id, when in used.items():
                    if entry_id in grants:
                        grants[entry_id] = grants[entry_id].used(when)
                    if entry_id in denies:
                        denies[entry_id] = denies[entry_id].used(when)
            if any(i in used for i in self._files[scope].ids()):
                self._update(scope, touch)

    def on_change(self, listener: Callable[[], Any]) -> None:
        """Call `listener()` whenever the grants in force change (from any thread)."""
        self._listeners.append(listener)

    def _update(self, scope: Scope, change: Callable[[GrantFile], Any]) -> None:
        path = self.path(scope)
        if path is None:
            raise GrantFileError(self.unavailable(scope) or f"no {scope} grants file")
        written = update_grant_file(path, scope, self.project if scope == "project" else None,
                                    change)
        with self._lock:
            self._files[scope] = written
        self._changed()

    def _changed(self) -> None:
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:  # a listener's failure is its own
                continue
