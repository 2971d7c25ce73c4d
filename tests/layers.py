#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The layers of src/, declared once, lowest first: a file may include headers of its own
folder and of the folders before its own, by path from src/ ("model/view.h"), and headers
shared with the BPF side ("schedprof/..."), never a folder after its own. Also: include/ and
bpf/ include nothing from src/.

A view's folder, src/views/NAME/, holds its parts in several layers: each file is in the layer
its name says (VIEW_FILES), and its BPF part (NAME.bpf.c) is the BPF side's.

usage: layers.py ROOT            the repository: exit 1 with one line per wrong include
       layers.py --planted ROOT  the check itself: on copies of ROOT's src/ with one wrong-way
                                 include planted in each, exit 0 only when each is the one
                                 reported
"""
import os
import re
import shutil
import sys
import tempfile

LAYERS = ['base', 'model', 'symbols', 'rows', 'format', 'fleet', 'loader', 'collect', 'cli']

# a view folder's files: name -> layer
VIEW_FILES = {'model.c': 'model', 'rows.c': 'rows', 'rows.h': 'rows', 'collect.c': 'collect'}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


# Wrong-way includes being removed, each a known one: a new one fails, and so does one listed
# here that is gone (the list only shrinks). Empty: keep it so.
PENDING = set()


def view_files(src, bad):
    """(path from src/, layer) of each file of src/views/*/; a BPF part's layer is None."""
    out = []
    views = os.path.join(src, 'views')
    if not os.path.isdir(views):
        return out
    for v in sorted(os.listdir(views)):
        if not os.path.isdir(os.path.join(views, v)):
            bad.append(f'src/views/{v}: not a view\'s folder')
            continue
        for f in sorted(os.listdir(os.path.join(views, v))):
            if f == v + '.bpf.c':
                out.append((f'views/{v}/{f}', None))
            elif f in VIEW_FILES:
                out.append((f'views/{v}/{f}', VIEW_FILES[f]))
            else:
                bad.append(f'src/views/{v}/{f}: a view\'s folder holds {v}.bpf.c and '
                           f'{", ".join(sorted(VIEW_FILES))} (tests/layers.py VIEW_FILES)')
    return out


def include_layer(inc):
    """The layer of an include by path from src/: a folder, or a view's file by its name."""
    parts = inc.split('/')
    if parts[0] == 'views' and len(parts) == 3:
        return VIEW_FILES.get(parts[2])
    return parts[0]


def check(root):
    """The wrong includes under root, one line each."""
    src = os.path.join(root, 'src')
    rank = {name: i for i, name in enumerate(LAYERS)}
    headers = {}  # basename -> folder, to name a flat include's folder
    bad = []
    seen = set()
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))
                     and d != 'views')
    for d in folders:
        if d not in rank:
            bad.append(f'src/{d}/: a folder that is not a layer (add it to LAYERS in '
                       f'tests/layers.py, in its place)')
            continue
        for f in os.listdir(os.path.join(src, d)):
            if f.endswith('.h'):
                headers[f] = d
    files = [(f'{d}/{f}', d) for d in folders if d in rank
             for f in sorted(os.listdir(os.path.join(src, d))) if f.endswith(('.c', '.h'))]
    bpf_side = []
    for rel, layer in view_files(src, bad):
        if layer is None:
            bpf_side.append(os.path.join(src, rel))
        else:
            files.append((rel, layer))
    for rel, d in files:
        with open(os.path.join(src, rel), encoding='utf-8') as fh:
            text = fh.read()
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            line = text.count('\n', 0, m.start()) + 1
            where = f'src/{rel}:{line}'
            if '/' not in inc:
                if inc in headers:
                    bad.append(f'{where}: "{inc}" by path: "{headers[inc]}/{inc}"')
                continue  # generated (*.skel.h, schema_sql.h)
            top = include_layer(inc)
            if top == 'schedprof':
                continue
            if top not in rank:
                bad.append(f'{where}: "{inc}" names no layer')
            elif rank[top] > rank[d]:
                if f'src/{rel}:{inc}' in PENDING:
                    seen.add(f'src/{rel}:{inc}')
                    continue
                bad.append(f'{where}: "{inc}": {d} is below {top} '
                           f'({" < ".join(LAYERS)})')
    for d in ('include', 'bpf'):
        for dirpath, _, names in os.walk(os.path.join(root, d)):
            bpf_side += [os.path.join(dirpath, f) for f in sorted(names)
                         if f.endswith(('.c', '.h'))]
    for path in bpf_side:
        with open(path, encoding='utf-8') as fh:
            text = fh.read()
        for m in INCLUDE.finditer(text):
            top = m.group(1).split('/')[0]
            if top in rank or top == 'views' or m.group(1) in headers:
                rel = os.path.relpath(path, root)
                bad.append(f'{rel}: "{m.group(1)}": the BPF side\'s headers include '
                           f'nothing from src/')
    for p in sorted(PENDING - seen):
        bad.append(f'{p.split(":")[0]}: no longer includes {p.split(":")[1]}: '
                   f'take it out of PENDING in tests/layers.py')
    return bad


PLANTS = [
    # (file under src/, the wrong-way include planted in it)
    ('base/util.h', 'cli/cli.h'),
    ('views/schedules/model.c', 'views/schedules/rows.h'),
]


def planted(root):
    """Plants each wrong-way include of PLANTS in a copy of src/: each must be reported."""
    failed = 0
    for victim, inc in PLANTS:
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(root, 'src'), os.path.join(tmp, 'src'))
            for d in ('include', 'bpf'):
                os.makedirs(os.path.join(tmp, d))
            with open(os.path.join(tmp, 'src', victim), 'a', encoding='utf-8') as fh:
                fh.write(f'#include "{inc}"\n')
            before = check(root)
            after = check(tmp)
        new = [b for b in after if b not in before]
        if len(new) == 1 and new[0].startswith(f'src/{victim}:') and inc in new[0]:
            print('planted violation reported:', new[0])
        else:
            print(f'planted violation (src/{victim} includes "{inc}") not reported as one '
                  'line; new lines:', new)
            failed = 1
    return failed


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
