# Prints the expected values of spelling_tasks_test.cc, computed the way nanochat's
# spelling tasks draw from Python's random module, over data/testdata/words.txt and the
# templates in spelling_tasks.cc. Run from the repository root: python3 data/tasks/spelling_golden.py
import random, re
src = open('data/tasks/spelling_tasks.cc', encoding='utf-8').read()
block = src[src.index('Templates() {'):src.index('return *t;')]
templates = [s for s in re.findall(r'^\s*"(.*)",$', block, re.M)]
print(len(templates))
words = [w.rstrip('\r ') for w in open('data/testdata/words.txt', encoding='utf-8', errors='surrogateescape').read().split('\n')]
words = [w for w in words if w and re.fullmatch('[a-z]+', w)]
print(words)
sw = list(words); random.Random(42).shuffle(sw)
print("simple train", [random.Random(i).choice(sw) for i in range(5)])
print("simple test", [random.Random(10_000_000 + i).choice(sw) for i in range(3)])
def bee(seed):
    r = random.Random(seed)
    word = r.choice(words)
    letter = r.choice(word) if r.random() < 0.9 else r.choice('abcdefghijklmnopqrstuvwxyz')
    t = r.choice(templates)
    lower = r.random() < 0.3
    q = lambda s: [s, "'" + s + "'", '"' + s + '"'][r._randbelow(3)]
    ql = q(letter); qw = q(word)
    user = t.replace('{L}', ql).replace('{W}', qw)
    if lower:
        user = ''.join(c.lower() if c.isascii() else c for c in user)
    if r.random() < 0.5: user += '?'
    return word, letter, word.count(letter), user
for i in range(10): print(i, bee(i))
for i in range(2): print('test', i, bee(10_000_000 + i))
