package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/shard"
)

// autoReplica starts one weir-controller replica with --shard-mode=auto
// (and --enable-leader-election, which auto overrides, as Flux's
// manifests set it), its own storage, debug logs for the per-object
// reconcile log, and the test's short lease timings.
func autoReplica(t *testing.T, env *testenv.Env, bin, ns string) *controllerProcess {
	t.Helper()
	p := newControllerProcessOf(t, env, bin, "source,kustomize")
	p.env = append(p.env, "RUNTIME_NAMESPACE="+ns)
	p.args = append(p.args, "--shard-mode=auto", "--enable-leader-election=true", "--log-level=debug",
		"--leader-election-lease-duration="+testLease.String(), "--leader-election-renew-deadline="+testRenew.String())
	p.start()
	return p
}

// shardRun is one reconcile a replica logged: the object, the member and
// when it started and finished (finished is zero while it runs, or when
// the replica was killed during it).
type shardRun struct {
	object, member    string
	started, finished time.Time
}

// shardLog is what a replica's log says: its identity, its reconciles, and
// the memberships it put in force.
type shardLog struct {
	identity string
	runs     []shardRun
	views    [][]string
}

func readShardLog(t *testing.T, p *controllerProcess) shardLog {
	t.Helper()
	f, err := os.Open(p.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out shardLog
	open := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line struct {
			Msg, TS, Object, Member, Members string
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		ts, _ := time.Parse("2006-01-02T15:04:05.000Z0700", line.TS)
		switch line.Msg {
		case "shard reconcile started":
			out.identity = line.Member
			open[line.Object] = len(out.runs)
			out.runs = append(out.runs, shardRun{object: line.Object, member: line.Member, started: ts})
		case "shard reconcile finished":
			if i, ok := open[line.Object]; ok {
				out.runs[i].finished = ts
				delete(open, line.Object)
			}
		case "sharding view in force":
			out.views = append(out.views, strings.Split(line.Members, ","))
		}
	}
	return out
}

// waitView waits until every replica of ps has put in force a view of
// exactly their identities, and returns those.
func waitView(t *testing.T, ps []*controllerProcess) []string {
	t.Helper()
	var members []string
	testenv.Eventually(t, 2*testenv.DefaultTimeout, func(context.Context) (bool, string) {
		var views []string
		for _, p := range ps {
			l := readShardLog(t, p)
			if len(l.views) == 0 {
				return false, "a replica has no view in force yet"
			}
			last := l.views[len(l.views)-1]
			if len(last) != len(ps) {
				return false, fmt.Sprintf("a replica's view is %v", last)
			}
			views = append(views, strings.Join(last, ","))
			members = last
		}
		slices.Sort(views)
		return len(slices.Compact(views)) == 1, fmt.Sprintf("views differ: %v", views)
	})
	return members
}

// shardFleet creates a GitRepository of count directories of one
// ConfigMap each and count Kustomizations applying one directory each.
func shardFleet(t *testing.T, env *testenv.Env, ns string, count int) []*kustomizev1.Kustomization {
	t.Helper()
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "fleet.git")
	files := map[string]string{}
	for i := range count {
		files[fmt.Sprintf("app-%d/cm.yaml", i)] = testenv.ConfigMapsYAML(fmt.Sprintf("app-%d-", i), 1)
	}
	srv.Commit(t, "fleet.git", gitserver.Commit{Files: files, Message: "fleet"})
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{URL: srv.HTTPURL("fleet.git"), Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
	}
	env.Create(t, repo)
	var out []*kustomizev1.Kustomization
	for i := range count {
		ks := &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d", i), Namespace: ns},
			Spec: kustomizev1.KustomizationSpec{
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: repo.Name},
				Path:      fmt.Sprintf("./app-%d", i), Prune: true, TargetNamespace: ns,
				Interval: metav1.Duration{Duration: time.Hour},
			},
		}
		env.Create(t, ks)
		deleteWhileRunning(t, env, ks)
		out = append(out, ks)
	}
	return out
}

// requestAll asks every Kustomization to reconcile and waits until each
// handled the request and is Ready.
func requestAll(t *testing.T, env *testenv.Env, fleet []*kustomizev1.Kustomization) {
	t.Helper()
	requested := time.Now().Format(time.RFC3339Nano)
	for _, ks := range fleet {
		env.Update(t, ks, func() { ks.Annotations = map[string]string{meta.ReconcileRequestAnnotation: requested} })
	}
	for _, ks := range fleet {
		waitReconciled(t, env, ks, requested)
	}
}

// ksObject is a Kustomization's name in the reconcile log.
func ksObject(ks *kustomizev1.Kustomization) string {
	return "*v1.Kustomization/" + ks.Namespace + "/" + ks.Name
}

// runsOf gathers every replica's reconciles of each object.
func runsOf(t *testing.T, ps []*controllerProcess) map[string][]shardRun {
	t.Helper()
	out := map[string][]shardRun{}
	for _, p := range ps {
		for _, r := range readShardLog(t, p).runs {
			out[r.object] = append(out[r.object], r)
		}
	}
	return out
}

// assertNoOverlap checks that no two replicas reconciled one object at
// once: sorted by start, each run starts after the one before finished. A
// run with no end (its replica was killed) ends at killed.
func assertNoOverlap(t *testing.T, runs map[string][]shardRun, killed time.Time) {
	t.Helper()
	for obj, rs := range runs {
		sort.Slice(rs, func(i, j int) bool { return rs[i].started.Before(rs[j].started) })
		for i := 1; i < len(rs); i++ {
			end := rs[i-1].finished
			if end.IsZero() {
				end = killed
			}
			if rs[i].started.Before(end) {
				t.Errorf("%s: reconciled by %s from %s while %s's run (from %s) had not ended",
					obj, rs[i].member, rs[i].started.Format(time.StampMilli), rs[i-1].member, rs[i-1].started.Format(time.StampMilli))
			}
		}
	}
}

// assertOwners checks that every run of each Kustomization since `since`
// was by its owner among members.
func assertOwners(t *testing.T, runs map[string][]shardRun, fleet []*kustomizev1.Kustomization, members []string, since time.Time) {
	t.Helper()
	for _, ks := range fleet {
		want := shard.Owner(ks.Namespace+"/"+ks.Name, members)
		n := 0
		for _, r := range runs[ksObject(ks)] {
			if r.started.Before(since) {
				continue
			}
			n++
			if r.member != want {
				t.Errorf("%s reconciled by %s, its owner among %v is %s", ks.Name, r.member, members, want)
			}
		}
		if n == 0 {
			t.Errorf("%s not reconciled since %s", ks.Name, since.Format(time.StampMilli))
		}
	}
}

// TestAutoShardingSharesJoinsAndTakesOver runs replicas of one Deployment
// with --shard-mode=auto against one API server, each with its own
// storage: (a) two replicas share 20 Kustomizations, each reconciled by
// its owner alone, all Ready (reading the GitRepository's artifact from
// whichever replica's storage serves it); (b) a third joins: only the
// objects whose owner changed move, to it, and no object is reconciled by
// two replicas at once; (c) one is killed with SIGKILL: once its Lease
// expired the others take its objects, and each is reconciled and Ready.
// Beside the replicas' own reconcile log, the API server's audit of
// status writes (by User-Agent, which names the member) shows each
// Kustomization written by one replica at a time across both hand-overs.
func TestAutoShardingSharesJoinsAndTakesOver(t *testing.T) {
	const count = 20
	env := testenv.Get(t)
	ns := env.Namespace(t)
	bin := buildController(t)
	ps := []*controllerProcess{autoReplica(t, env, bin, ns), autoReplica(t, env, bin, ns)}
	two := waitView(t, ps)
	fleet := shardFleet(t, env, ns, count)
	for _, ks := range fleet {
		waitReconciled(t, env, ks, "")
	}
	runs := runsOf(t, ps)
	assertOwners(t, runs, fleet, two, time.Time{})
	for _, ks := range fleet {
		if members := runMembers(runs[ksObject(ks)]); len(members) != 1 {
			t.Errorf("%s reconciled by %v, want one replica", ks.Name, members)
		}
	}

	ps = append(ps, autoReplica(t, env, bin, ns))
	three := waitView(t, ps)
	joined := time.Now()
	requestAll(t, env, fleet)
	runs = runsOf(t, ps)
	assertNoOverlap(t, runs, time.Time{})
	assertOwners(t, runs, fleet, three, joined)
	moved := 0
	for _, ks := range fleet {
		key := ks.Namespace + "/" + ks.Name
		before, after := shard.Owner(key, two), shard.Owner(key, three)
		if before != after {
			moved++
		}
		for _, m := range runMembers(runs[ksObject(ks)]) {
			if m != before && m != after {
				t.Errorf("%s reconciled by %s, neither its owner before (%s) nor after (%s) the join", ks.Name, m, before, after)
			}
		}
	}
	t.Logf("the join moved %d of %d Kustomizations", moved, count)

	victim := ps[0]
	gone := readShardLog(t, victim).identity
	victim.kill()
	killed := time.Now()
	survivors := ps[1:]
	left := waitView(t, survivors)
	t.Logf("the survivors put a view without the killed replica in force %.1fs after the kill (lease duration %s)",
		time.Since(killed).Seconds(), testLease)
	if slices.Contains(left, gone) {
		t.Fatalf("the killed replica %s is still a member: %v", gone, left)
	}
	requestAll(t, env, fleet)
	t.Logf("every Kustomization handled a reconcile request %.1fs after the kill", time.Since(killed).Seconds())
	runs = runsOf(t, ps)
	assertNoOverlap(t, runs, killed)
	assertOwners(t, runs, fleet, left, killed)
	var identities []string
	for _, p := range ps {
		identities = append(identities, readShardLog(t, p).identity)
	}
	assertAuditedWriters(t, env, ns, fleet, identities)
}

// statusWritesAudit is the test API server's audit policy: the status
// writes of Kustomizations, with their User-Agent (which names the
// member in auto mode), nothing else.
const statusWritesAudit = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [patch, update]
  resources:
  - group: kustomize.toolkit.fluxcd.io
    resources: [kustomizations/status]
- level: None
`

// auditWriters reads the API server's audit log: for each Kustomization
// of ns, the members whose status writes succeeded, in the order the API
// server received them, consecutive writes of one member counted once.
func auditWriters(t *testing.T, env *testenv.Env, ns string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(env.ControlPlane.AuditLogPath())
	if err != nil {
		t.Fatalf("reading the audit log: %v", err)
	}
	type write struct {
		at     time.Time
		member string
	}
	writes := map[string][]write{}
	for _, line := range strings.Split(string(data), "\n") {
		var ev struct {
			Stage, UserAgent         string
			RequestReceivedTimestamp time.Time
			ObjectRef                struct{ Resource, Subresource, Namespace, Name string }
			ResponseStatus           struct{ Code int }
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Stage != "ResponseComplete" || ev.ObjectRef.Namespace != ns ||
			ev.ObjectRef.Resource != "kustomizations" || ev.ObjectRef.Subresource != "status" || ev.ResponseStatus.Code >= 300 {
			continue
		}
		_, member, _ := strings.Cut(ev.UserAgent, ShardUserAgentPrefix)
		writes[ev.ObjectRef.Name] = append(writes[ev.ObjectRef.Name], write{ev.RequestReceivedTimestamp, member})
	}
	out := map[string][]string{}
	for name, ws := range writes {
		sort.SliceStable(ws, func(i, j int) bool { return ws[i].at.Before(ws[j].at) })
		for _, w := range ws {
			if seq := out[name]; len(seq) == 0 || seq[len(seq)-1] != w.member {
				out[name] = append(seq, w.member)
			}
		}
	}
	return out
}

// assertAuditedWriters checks, from the API server's audit of status
// writes, that each Kustomization was written by one replica at a time:
// once another replica wrote it, the one before never did again, and
// every writer is one of the replicas.
func assertAuditedWriters(t *testing.T, env *testenv.Env, ns string, fleet []*kustomizev1.Kustomization, replicas []string) {
	t.Helper()
	writers := auditWriters(t, env, ns)
	moved := 0
	for _, ks := range fleet {
		seq := writers[ks.Name]
		if len(seq) == 0 {
			t.Errorf("%s: no status write in the API server's audit log", ks.Name)
		}
		if len(seq) > 1 {
			moved++
		}
		for i, m := range seq {
			if !slices.Contains(replicas, m) {
				t.Errorf("%s: status written by %q, not one of the replicas %v", ks.Name, m, replicas)
			}
			if slices.Contains(seq[:i], m) {
				t.Errorf("%s: status writes by %v in turn: %s wrote again after another replica had", ks.Name, seq, m)
			}
		}
	}
	t.Logf("audit log: %d of %d Kustomizations were written by more than one replica, one after the other", moved, len(fleet))
}

// runMembers are the replicas that ran rs.
func runMembers(rs []shardRun) []string {
	var out []string
	for _, r := range rs {
		if !slices.Contains(out, r.member) {
			out = append(out, r.member)
		}
	}
	return out
}
