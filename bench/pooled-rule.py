#!/usr/bin/env python3
"""The rule the claims used until 2026-11-29, applied to an A/A calibration's results.

Every run of every pass of each side pooled as independent samples, Welch's interval on the
log of the means at 95 % (what src/suite/claims.rs did before the server start became the
unit). Run on the folder of `enginebench reproduce NAME --calibrate --results-dir DIR` to see
how many of its comparisons (false by construction) that rule called significant, for the
first 2, 3, ... N passes, beside the current rule's figures in DIR/calibration.md.

Usage: bench/pooled-rule.py DIR PASSES
"""
import json, os, glob, math, sys
T=[12.706,4.303,3.182,2.776,2.571,2.447,2.365,2.306,2.262,2.228,2.201,2.179,2.160,2.145,2.131,2.120,2.110,2.101,2.093,2.086,2.080,2.074,2.069,2.064,2.060,2.056,2.052,2.048,2.045,2.042]
def tq(df):
    d=max(1,int(math.floor(df)));  return T[d-1] if d<=30 else 1.96
root=sys.argv[1]; P=int(sys.argv[2])
def runs(cell, op, t, passes):
    out=[]
    for p in range(1,passes+1):
        d=root if p==1 else f"{root}/pass-{p}"
        for r in sorted(glob.glob(f"{d}/{cell}/*/result.json")):  # cell: a glob
            if os.path.basename(os.path.dirname(r)).startswith(("disturbed-","resumed-")): continue
            doc=json.load(open(r))
            for pt in doc["points"]:
                if pt["operation"]==op and pt["threads"]==t:
                    if any(x.get("disturbed") for x in pt["runs"]): return None
                    out+= [x["ops_per_s"] for x in pt["runs"]]
    return out
cal=json.load(open(f"{root}/calibration.json"))
for passes in range(2,P+1):
    sig=n=0
    for c in cal["comparisons"]:
        sec,op,t=c["id"].split("/"); t=int(t)
        a=runs(f"{sec}-a-*-t{t}",op,t,passes); b=runs(f"{sec}-b-*-t{t}",op,t,passes)
        if not a or not b: continue
        def mv(v):
            m=sum(v)/len(v); var=sum((x-m)**2 for x in v)/(len(v)-1); return m,var
        (ma,va),(mb,vb)=mv(a),mv(b)
        pa=va/(len(a)*ma*ma); pb=vb/(len(b)*mb*mb)
        se=math.sqrt(pa+pb); df=(pa+pb)**2/(pa*pa/(len(a)-1)+pb*pb/(len(b)-1))
        d=math.log(ma/mb); n+=1
        if abs(d)>tq(df)*se: sig+=1
    print(f"old rule (every run pooled), {passes} passes: {sig} of {n} called significant")
