"""What two builds of `mnemo serve` return for the same queries on copies of one database.

Usage: python3 models/compare/agreement.py OLD_MNEMO NEW_MNEMO DB
DB is a database kept by `cargo xtask bench ... --spaces 3 --keep DB` (tenant `bench`, user
`user-0`). Each build serves a copy of DB; 80 queries (60 in the bench's own form, 20 as
questions) go to the user's own notebook and to it with every space, over HTTP, k = 10. Prints
the top-10 overlap, how often the first result is the same, and how many results hold every
word of the query, per build.
"""
import json, os, random, shutil, subprocess, sys, tempfile, time, urllib.request

old_bin, new_bin, src = sys.argv[1], sys.argv[2], sys.argv[3]
scratch = tempfile.mkdtemp()
names = ["Ana","Ben","Chloe","Dev","Elena","Farid","Grace","Hugo","Ines","Jonas","Kira","Liam","Maya","Noah","Olga","Priya","Quinn","Rosa","Sami","Theo"]
src_text = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "xtask", "src", "bench.rs")).read()
def arr(name):
    body = src_text.split(f"const {name}: &[&str] = &[")[1].split("];")[0]
    return [w.strip().strip('"') for w in body.replace("\n", " ").split('",') if w.strip().strip('"')]
verbs, objects = arr("VERBS"), arr("OBJECTS")
rng = random.Random(7)
queries = [f"{rng.choice(names)} {rng.choice(verbs)} {rng.choice(objects)}" for _ in range(60)]
# plus everyday phrasings that share fewer words
queries += [f"what did {rng.choice(names)} do with {rng.choice(objects)}" for _ in range(20)]

def run(binary, port):
    db = os.path.join(scratch, f"{port}.db")
    shutil.copy(src, db)
    key = subprocess.run([binary, "keys", "create", "--db", db, "--tenant", "bench", "--user", "user-0", "--json"],
                         capture_output=True, text=True, check=True).stdout
    key = json.loads(key)["key"]
    proc = subprocess.Popen([binary, "serve", "--db", db, "--addr", f"127.0.0.1:{port}", "--rate-limit", "100000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    def search(q, spaces=None):
        body = {"query": q, "k": 10, "min_relevance": 0}
        if spaces: body["spaces"] = spaces
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/search", data=json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
        res = json.load(urllib.request.urlopen(req, timeout=120))["results"]
        return [(r["memory"] if "memory" in r else r) for r in res]
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2); break
        except Exception: time.sleep(0.5)
    out = {}
    for warm in range(2):
        search("warm up", ["private"]); search("warm up")
    for q in queries:
        out[q] = (search(q, ["private"]), search(q))
    proc.terminate(); proc.wait()
    os.remove(db)
    return out

a = run(old_bin, 7101)
b = run(new_bin, 7102)
def full(q, m):
    return all(w.lower() in m["content"].lower() for w in q.split() if w not in ("what","did","do","with"))
for i, label in enumerate(["own notebook", "with 3 spaces"]):
    for name, res in (("before", a), ("after", b)):
        print(f"{label} {name}: results holding every query word, top 10: {sum(sum(full(q, m) for m in res[q][i]) for q in queries)/len(queries):.2f} of 10")
    ids = lambda rs: [m["id"] for m in rs]
    overlap = [len(set(ids(a[q][i])) & set(ids(b[q][i]))) / max(1, len(a[q][i])) for q in queries]
    same_first = sum(1 for q in queries if ids(a[q][i][:1]) == ids(b[q][i][:1]))
    print(f"{label}: mean top-10 overlap {sum(overlap)/len(overlap):.3f}, same first result {same_first}/{len(queries)}, results per query {sum(len(b[q][i]) for q in queries)/len(queries):.1f} (before {sum(len(a[q][i]) for q in queries)/len(queries):.1f})")
