"""mktree.py DIR N: N text-like files of 4-64 KiB (seeded, the same bytes every run) in 20
directories of 10 subdirectories, for run.sh and profile.sh."""
import os, random, sys
root=sys.argv[1]; n=int(sys.argv[2])
rnd=random.Random(7)
words=[''.join(rnd.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(rnd.randint(2,9))) for _ in range(2000)]
for i in range(n):
    d=os.path.join(root, 'd%02d' % (i % 20), 's%d' % (i//20 % 10))
    os.makedirs(d, exist_ok=True)
    size=rnd.randint(4096, 65536)
    out=[]; t=0
    while t<size:
        line=' '.join(rnd.choice(words) for _ in range(12))+'\n'; out.append(line); t+=len(line)
    open(os.path.join(d,'f%06d.txt'%i),'w').write(''.join(out)[:size])
