#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every repository path that a comment or a page names exists, and README.md stays short.

Comments are those of the C, BPF, shell (and any #! script), Python, meson and SQL files;
pages are README.md and every other *.md. A path is a word that starts with one of the
top-level folders below (src/collect/trace.c, tests/unit/, bench/README.md), or, in a page,
a relative link target ([json](json.md)), with its #anchor when it has one. Braces expand
(src/collect/{trace,target}.c), `*` globs, and an upper-case or <angle-bracketed> part is a
placeholder for any name (view_NAME.c, test_<name>.c). Fails listing every path that does
not exist, as FILE:LINE: PATH.

Usage: paths.py [ROOT]   (default: the repository this file is in)
"""
import glob
import os
import re
import sys

README_MAX_LINES = 300
TOP = ('src', 'bpf', 'include', 'tests', 'scripts', 'docs', 'bench', 'examples', 'sql',
       'dist', 'man')
# a top-level folder at a word's start (not inside /usr/include/ or build/tests/), then path
# characters
PATH_RE = re.compile(r'(?<![\w./~$@-])((?:%s)/(?:[\w./+*{},<>-]|\[[a-z]+\]|\$\{?\w+\}?)*)' %
                     '|'.join(TOP))
# the kernel's headers, named in comments as the kernel's tree names them: only
# include/schedprof/ is ours
KERNEL_INCLUDE = re.compile(r'include/(?!schedprof\b)[a-z]')
LINK_RE = re.compile(r'\]\(([^)\s#]*)(?:#([^)\s]*))?\)')
SKIP_DIRS = {'.git', 'fixtures', 'golden', 'corpus', 'corpus_model', 'node_modules'}
C_EXT = ('.c', '.h', '.cc', '.cpp')
HASH_EXT = ('.sh', '.py', '.build', '.txt', '.service')


def c_comments(text):
    """(line, comment text) of each /* */ and // comment; string literals are skipped."""
    out = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == '\n':
            line += 1
            i += 1
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            line += text.count('\n', i, j)
            i = j + 1
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j
            for k, part in enumerate(text[i + 2:j].split('\n')):
                out.append((line + k, part))
            line += text.count('\n', i, j)
            i = j + 2
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            i = j
        else:
            i += 1
    return out


def marked_comments(text, mark):
    """(line, text after mark) of the lines with a comment that starts with mark."""
    out = []
    for no, l in enumerate(text.split('\n'), 1):
        # a mark inside quotes is not a comment; a rough test, enough for our scripts
        for m in re.finditer(re.escape(mark), l):
            before = l[:m.start()]
            if before.count('"') % 2 == 0 and before.count("'") % 2 == 0 and \
                    (m.start() == 0 or l[m.start() - 1] in ' \t'):
                out.append((no, l[m.end():]))
                break
    return out


def expand(path):
    """The brace alternatives of path, each a glob pattern."""
    m = re.search(r'\{([^{}]*)\}', path)
    if not m:
        return [path]
    return [p for alt in m.group(1).split(',')
            for p in expand(path[:m.start()] + alt + path[m.end():])]


def to_glob(part):
    part = re.sub(r'<[^<>/]*>|\$\{?\w+\}?', '*', part)
    # NAME, N, COMM: a placeholder (file names of ours are lower case)
    return re.sub(r'(?<![a-z])[A-Z][A-Z0-9_]*(?![a-z])', '*', part) if not part.endswith('.md') \
        else part


def exists(root, base, path):
    path = path.rstrip('.,:;')
    if not path or KERNEL_INCLUDE.match(path):
        return True
    for alt in expand(path):
        pat = '/'.join(to_glob(p) for p in alt.split('/'))
        full = os.path.normpath(os.path.join(base, pat))
        if not full.startswith(root):
            return True  # outside the repository (../shared/...): not ours to check
        if glob.glob(full) or glob.glob(full.rstrip('/')):
            return True
    return False


def anchors(path, cache={}):
    """The anchors GitHub gives the headings of a markdown file (lower case, punctuation
    dropped, spaces to hyphens, -1, -2 for repeats), outside code blocks."""
    if path not in cache:
        seen, out, fence = {}, set(), False
        with open(path, encoding='utf-8') as f:
            for l in f:
                if l.startswith('```'):
                    fence = not fence
                m = None if fence else re.match(r'#{1,6} (.*)', l)
                if not m:
                    continue
                a = re.sub(r'[^\w\- ]', '', m.group(1).strip().lower()).replace(' ', '-')
                n = seen.get(a, 0)
                seen[a] = n + 1
                out.add(a if not n else '%s-%d' % (a, n))
        cache[path] = out
    return cache[path]


def scan(root):
    bad = []
    for d, dirs, files in os.walk(root):
        rel_d = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and
                         not (rel_d == '.' and (x.startswith('build') or
                                                (x.startswith('.') and x != '.ci'))))
        for name in sorted(files):
            f = os.path.join(d, name)
            rel = os.path.relpath(f, root)
            try:
                text = open(f, encoding='utf-8').read()
            except (UnicodeDecodeError, OSError):
                continue
            if name.endswith('.md'):
                chunks = list(enumerate(text.split('\n'), 1))
            elif name.endswith(C_EXT):
                chunks = c_comments(text)
            elif name.endswith(HASH_EXT) or name == 'meson.build' or text.startswith('#!'):
                chunks = marked_comments(text, '#')
            elif name.endswith('.sql'):
                chunks = marked_comments(text, '--')
            else:
                continue
            for line, chunk in chunks:
                for m in PATH_RE.finditer(chunk):
                    if not exists(root, root, m.group(1)):
                        bad.append('%s:%d: %s' % (rel, line, m.group(1).rstrip('.,:;')))
                if not name.endswith('.md'):
                    continue
                for m in LINK_RE.finditer(chunk):
                    target, frag = m.group(1), m.group(2)
                    if re.match(r'[a-z]+:', target) or target.startswith('/'):
                        continue  # a URL, or a host's file
                    if target and not exists(root, d, target):
                        bad.append('%s:%d: %s' % (rel, line, target))
                        continue
                    page = os.path.join(d, target) if target else f
                    if frag and page.endswith('.md') and frag not in anchors(page):
                        bad.append('%s:%d: %s#%s (no such heading)' % (rel, line, target, frag))
    return bad


def main():
    root = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else
                            os.path.join(os.path.dirname(__file__), '..', '..'))
    bad = list(dict.fromkeys(scan(root)))  # a link's target is also a path word: once
    ok = True
    if bad:
        ok = False
        print('%d repository paths named in comments or pages do not exist:' % len(bad))
        for b in bad:
            print('  ' + b)
    with open(os.path.join(root, 'README.md'), encoding='utf-8') as f:
        n = sum(1 for _ in f)
    if n > README_MAX_LINES:
        ok = False
        print('README.md: %d lines, more than %d: move the details to docs/' %
              (n, README_MAX_LINES))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
