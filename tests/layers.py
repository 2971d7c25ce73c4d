#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The layers of src/, declared once, lowest first: a file may include headers of its own
folder and of the folders before its own, by path from src/ ("model/view.h"), and headers
shared with the BPF side ("schedprof/..."), never a folder after its own. Also: include/ and
bpf/ include nothing from src/.

usage: layers.py ROOT            the repository: exit 1 with one line per wrong include
       layers.py --planted ROOT  the check itself: on a copy of ROOT's src/ with one wrong-way
                                 include planted, exit 0 only when it is the one reported
"""
import os
import re
import shutil
import sys
import tempfile

LAYERS = ['base', 'model', 'symbols', 'rows', 'format', 'fleet', 'loader', 'collect', 'cli']

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


# Wrong-way includes being removed, each a known one: a new one fails, and so does one listed
# here that is gone (the list only shrinks). Empty: keep it so.
PENDING = set()


def check(root):
    """The wrong includes under root, one line each."""
    src = os.path.join(root, 'src')
    rank = {name: i for i, name in enumerate(LAYERS)}
    headers = {}  # basename -> folder, to name a flat include's folder
    bad = []
    seen = set()
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    for d in folders:
        if d not in rank:
            bad.append(f'src/{d}/: a folder that is not a layer (add it to LAYERS in '
                       f'tests/layers.py, in its place)')
            continue
        for f in os.listdir(os.path.join(src, d)):
            if f.endswith('.h'):
                headers[f] = d
    for d in folders:
        if d not in rank:
            continue
        for f in sorted(os.listdir(os.path.join(src, d))):
            if not f.endswith(('.c', '.h')):
                continue
            path = os.path.join(src, d, f)
            with open(path, encoding='utf-8') as fh:
                text = fh.read()
            for m in INCLUDE.finditer(text):
                inc = m.group(1)
                line = text.count('\n', 0, m.start()) + 1
                where = f'src/{d}/{f}:{line}'
                if '/' not in inc:
                    if inc in headers:
                        bad.append(f'{where}: "{inc}" by path: "{headers[inc]}/{inc}"')
                    continue  # generated (*.skel.h, schema_sql.h)
                top = inc.split('/')[0]
                if top == 'schedprof':
                    continue
                if top not in rank:
                    bad.append(f'{where}: "{inc}" names no layer')
                elif rank[top] > rank[d]:
                    if f'src/{d}/{f}:{inc}' in PENDING:
                        seen.add(f'src/{d}/{f}:{inc}')
                        continue
                    bad.append(f'{where}: "{inc}": {d} is below {top} '
                               f'({" < ".join(LAYERS)})')
    for d in ('include', 'bpf'):
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith(('.c', '.h')):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding='utf-8') as fh:
                    text = fh.read()
                for m in INCLUDE.finditer(text):
                    top = m.group(1).split('/')[0]
                    if top in rank or m.group(1) in headers:
                        rel = os.path.relpath(path, root)
                        bad.append(f'{rel}: "{m.group(1)}": the BPF side\'s headers include '
                                   f'nothing from src/')
    for p in sorted(PENDING - seen):
        bad.append(f'{p.split(":")[0]}: no longer includes {p.split(":")[1]}: '
                   f'take it out of PENDING in tests/layers.py')
    return bad


def planted(root):
    """Plants a wrong-way include (base -> cli) in a copy of src/: it must be reported."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(root, 'src'), os.path.join(tmp, 'src'))
        for d in ('include', 'bpf'):
            os.makedirs(os.path.join(tmp, d))
        victim = os.path.join(tmp, 'src', 'base', 'util.h')
        with open(victim, 'a', encoding='utf-8') as fh:
            fh.write('#include "cli/cli.h"\n')
        before = check(root)
        after = check(tmp)
    new = [b for b in after if b not in before]
    if len(new) == 1 and new[0].startswith('src/base/util.h:') and 'cli/cli.h' in new[0]:
        print('planted violation reported:', new[0])
        return 0
    print('planted violation (src/base/util.h includes "cli/cli.h") not reported as one '
          'line; new lines:', new)
    return 1


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--planted':
        return planted(sys.argv[2])
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    bad = check(sys.argv[1])
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
