"""Sums ncu's per-instruction stall samples.

usage: stall_samples.py SOURCE.csv [N]
SOURCE.csv: `ncu -i REPORT --page source --print-source sass --csv`. Prints each stall reason's
share of all samples, then the N instructions (default 25) with the most samples and their
three largest reasons.
"""
import csv,sys
f=sys.argv[1]
rows=list(csv.reader(open(f)))
h=rows[1]; data=[r for r in rows[2:] if len(r)==len(h)]
ix={n:i for i,n in enumerate(h)}
tot=sum(int(r[ix["Warp Stall Sampling (All Samples)"]] or 0) for r in data)
reasons=[n for n in h if n.startswith('stall_') and '(Not Issued)' not in n]
agg={n:sum(int(r[ix[n]] or 0) for r in data) for n in reasons}
print(f, 'total samples', tot)
print(' '.join(f"{n[6:]}={v*100/tot:.1f}%" for n,v in sorted(agg.items(),key=lambda x:-x[1]) if v))
data.sort(key=lambda r:-int(r[ix["Warp Stall Sampling (All Samples)"]] or 0))
for r in data[:int(sys.argv[2]) if len(sys.argv)>2 else 25]:
    s=int(r[ix["Warp Stall Sampling (All Samples)"]]); top=sorted(((int(r[ix[n]] or 0),n[6:]) for n in reasons),reverse=True)[:3]
    print(f"{s*100/tot:5.1f}% {r[0][-5:]} {r[1].strip()[:60]:60s} {top}")
