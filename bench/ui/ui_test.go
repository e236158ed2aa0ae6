package ui

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/uiserver"
	"github.com/weir-gitops/weir/internal/ui/fleetview"
	"github.com/weir-gitops/weir/internal/ui/server"
	"github.com/weir-gitops/weir/internal/ui/web"
)

// entriesPerKustomization is the inventory size of each Kustomization.
const entriesPerKustomization = 20

// TestMain starts a control plane (API server only: nothing here needs a
// node or a controller) when -bench is given, and nothing otherwise.
func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		os.Exit(m.Run())
	}
	testenv.Main(m, testenv.APIServerOnly)
}

const revision = "main@sha1:2c83ed64161993761f84ced0b182cfaed4edd56b"

func ready(gen int64, reason, msg string) []metav1.Condition {
	return []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: reason, Message: msg,
		ObservedGeneration: gen, LastTransitionTime: metav1.Now()}}
}

// createFleet writes the GitRepository and n Kustomizations, ten workers
// at a time, each with its Ready status and inventory written directly.
func createFleet(b *testing.B, env *testenv.Env, ns string, n int) {
	b.Helper()
	ctx := context.Background()
	repo := benchenv.CreateRepository(b, env, ns, "http://127.0.0.1:1/fleet.git")
	repo.Status.ObservedGeneration = repo.Generation
	repo.Status.Conditions = ready(repo.Generation, "Succeeded", "stored artifact for revision '"+revision+"'")
	repo.Status.Artifact = &meta.Artifact{Path: "gitrepository/fleet.tar.gz", URL: "http://127.0.0.1:1/fleet.tar.gz",
		Revision: revision, Digest: "sha256:" + fmt.Sprintf("%064x", 1), LastUpdateTime: metav1.Now()}
	if err := env.Client.Status().Update(ctx, repo); err != nil {
		b.Fatalf("GitRepository status: %v", err)
	}
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			for i := range work {
				errs <- createKustomization(ctx, env.Client, ns, i)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
}

func ksName(i int) string { return fmt.Sprintf("ks-%04d", i) }

// createKustomization creates Kustomization i, dependsOn i-1 within its
// chain of ten, and writes its status.
func createKustomization(ctx context.Context, c client.Client, ns string, i int) error {
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: ksName(i), Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
			Path:      fmt.Sprintf("./apps/%04d", i), Prune: true, Interval: metav1.Duration{Duration: time.Hour},
		},
	}
	if i%10 != 0 {
		k.Spec.DependsOn = []meta.DependencyReference{{Name: ksName(i - 1)}}
	}
	if err := c.Create(ctx, k); err != nil {
		return fmt.Errorf("creating %s: %w", k.Name, err)
	}
	entries := make([]kustomizev1.ResourceRef, entriesPerKustomization)
	for j := range entries {
		entries[j] = kustomizev1.ResourceRef{ID: fmt.Sprintf("%s_%s-cm-%02d__ConfigMap", ns, k.Name, j), Version: "v1"}
	}
	k.Status.ObservedGeneration = k.Generation
	k.Status.Conditions = ready(k.Generation, "ReconciliationSucceeded", "Applied revision: "+revision)
	k.Status.LastAppliedRevision, k.Status.LastAttemptedRevision = revision, revision
	k.Status.Inventory = &kustomizev1.ResourceInventory{Entries: entries}
	if err := c.Status().Update(ctx, k); err != nil {
		return fmt.Errorf("status of %s: %w", k.Name, err)
	}
	return nil
}

// listFloor is the same lists the overview needs, by a plain client.
func listFloor(b *testing.B, env *testenv.Env, ns string) time.Duration {
	b.Helper()
	start := time.Now()
	var ks kustomizev1.KustomizationList
	var repos sourcev1.GitRepositoryList
	if err := env.Client.List(context.Background(), &ks, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	if err := env.Client.List(context.Background(), &repos, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

func chromium(b *testing.B) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	b.Skip("the UI benchmark needs Debian's chromium; none found on PATH")
	return ""
}

// tab is a headless Chromium tab of 1280×900.
func tab(b *testing.B) context.Context {
	b.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(b)), chromedp.NoSandbox, chromedp.DisableGPU)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		b.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// timed runs actions then waits for expr to be truthy, and returns the
// time both took.
func timed(ctx context.Context, b *testing.B, expr string, actions ...chromedp.Action[chromedp.Void]) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	start := time.Now()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(5*time.Millisecond),
		chromedp.WithPollingTimeout(4*time.Minute))); err != nil {
		b.Fatalf("waiting for %s: %v", expr, err)
	}
	return time.Since(start)
}

const loaded = `document.getElementById('main')?.dataset.loaded === 'true'`

// BenchmarkUI reports the first overview load, the graph render and the
// status-change-to-page times, each with its floor and their ratio.
func BenchmarkUI(b *testing.B) {
	for _, n := range benchenv.Counts(b, "WEIR_BENCH_UI_KUSTOMIZATIONS", []int{1000}) {
		b.Run(fmt.Sprintf("kustomizations=%d", n), func(b *testing.B) {
			env := testenv.Get(b)
			ns := env.Namespace(b)
			createFleet(b, env, ns, n)
			ctx := tab(b)
			s := uiserver.Start(b, server.Options{Mode: server.Local, Config: env.Config, Assets: web.FS()}).Server
			for b.Loop() {
				measurePages(ctx, b, env, s, ns, n)
				measureLive(ctx, b, env, ns, n)
			}
		})
	}
}

// route moves the app to path without a page load, as a click on one of
// its links does.
func route(path string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`history.pushState(null, '', %q); dispatchEvent(new PopStateEvent('popstate'))`, path))
}

func measurePages(ctx context.Context, b *testing.B, env *testenv.Env, s *server.Server, ns string, n int) {
	b.Helper()
	floor := listFloor(b, env, ns)
	blank := timed(ctx, b, `document.readyState === 'complete'`, chromedp.Navigate("about:blank"))
	login, err := url.Parse(s.LoginURL())
	if err != nil {
		b.Fatal(err)
	}
	q := login.Query()
	q.Set("namespace", ns)
	login.RawQuery = q.Encode()
	count := func(testid string) string {
		return fmt.Sprintf(`%s && document.querySelectorAll('[data-testid=%s]').length === %d`, loaded, testid, n+1)
	}
	// The table comes a page at a time: the first overview is its first
	// page shown with the whole fleet counted; the next page is one more.
	first := min(n+1, fleetview.DefaultPageSize)
	rowsShown := func(rows int) string {
		return fmt.Sprintf(`%s && document.querySelectorAll('[data-testid=object-row]').length === %d &&
			document.querySelector('[data-testid=rows-shown]')?.textContent === 'Showing %d of %d'`, loaded, rows, rows, n+1)
	}
	overview := timed(ctx, b, rowsShown(first), chromedp.Navigate(login.String()))
	logAPITimes(ctx, b)
	if second := min(n+1, 2*first); second > first {
		next := timed(ctx, b, rowsShown(second), chromedp.Click(chromedp.CSS(`[data-testid=more-rows]`)))
		b.ReportMetric(next.Seconds(), "s/next-page")
		b.Logf("the next page of rows (%d to %d): %v", first, second, next)
	}
	graph := timed(ctx, b, count("graph-node"), route("/graph?namespace="+ns))
	pageFloor := floor + blank
	b.ReportMetric(overview.Seconds(), "s/overview")
	b.ReportMetric(graph.Seconds(), "s/graph")
	b.ReportMetric(floor.Seconds(), "s/list-floor")
	b.ReportMetric(blank.Seconds(), "s/blank-page")
	b.ReportMetric(overview.Seconds()/pageFloor.Seconds(), "x-overview-floor")
	b.ReportMetric(graph.Seconds()/pageFloor.Seconds(), "x-graph-floor")
	b.Logf("%d Kustomizations, %d inventory entries: first overview %v, graph %v; floor: lists %v + blank page %v (overview %.1fx, graph %.1fx)",
		n, n*entriesPerKustomization, overview, graph, floor, blank, overview.Seconds()/pageFloor.Seconds(), graph.Seconds()/pageFloor.Seconds())
}

// logAPITimes logs how long each /api/ request of the page took, as the
// browser measured it: where the time of a page load went.
func logAPITimes(ctx context.Context, b *testing.B) {
	b.Helper()
	times, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`performance.getEntriesByType('resource')
		.filter(e => e.name.includes('/api/') && !e.name.includes('/api/stream'))
		.map(e => new URL(e.name).pathname + ' ' + Math.round(e.duration) + 'ms')`))
	if err != nil {
		b.Fatal(err)
	}
	nav, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const n = performance.getEntriesByType('navigation')[0];
		return 'navigation (login redirect included) ' + Math.round(n.duration) + 'ms'; })()`))
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("first overview: %s; API: %v", nav, times)
}

// observe makes the page note, in window.seenAt (ms since the epoch), the
// first moment the element state() finds has data-state want.
func observe(state, want string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		window.seenAt = 0;
		const state = () => { const el = %s; return el && el.dataset.state; };
		const obs = new MutationObserver(() => {
			if (!window.seenAt && state() === %q) { window.seenAt = Date.now(); obs.disconnect(); }
		});
		obs.observe(document.getElementById('main'), {attributes: true, childList: true, subtree: true});
	})()`, state, want))
}

// flip writes Ready=False (or back to True) on the Kustomization's status
// and returns when it wrote it.
func flip(b *testing.B, env *testenv.Env, k *kustomizev1.Kustomization, failing bool) time.Time {
	b.Helper()
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(k), k); err != nil {
		b.Fatal(err)
	}
	k.Status.Conditions = ready(k.Generation, "ReconciliationSucceeded", "Applied revision: "+revision)
	if failing {
		k.Status.Conditions[0].Status, k.Status.Conditions[0].Reason = metav1.ConditionFalse, "HealthCheckFailed"
		k.Status.Conditions[0].Message = "bench: a status change"
	}
	start := time.Now()
	if err := env.Client.Status().Update(context.Background(), k); err != nil {
		b.Fatal(err)
	}
	return start
}

// measureLive changes one Kustomization's status five times while a page
// shows it, and reports the median time to the page noticing, beside a
// plain watch of the same object noticing.
func measureLive(ctx context.Context, b *testing.B, env *testenv.Env, ns string, n int) {
	b.Helper()
	// A row of the table's first page (the table is paged): ks-0100, or
	// the middle of a smaller fleet.
	k := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ksName(min(n/2, 100))}}
	measureChanges(ctx, b, env, k, []livePage{
		{"object", fmt.Sprintf("/objects/Kustomization/%s/%s", ns, k.Name), `document.getElementById('object-state')`},
		{"overview-row", "/?namespace=" + ns, fmt.Sprintf(`document.querySelector('[data-testid=object-row][data-id="Kustomization/%s/%s"]')`, ns, k.Name)},
	})
}

// livePage is a page showing a Kustomization, and the expression finding
// the element whose data-state tells its state.
type livePage struct{ name, path, state string }

// measureChanges flips k's Ready six times on each page and reports the
// median time to the page noticing beside a plain watch noticing.
func measureChanges(ctx context.Context, b *testing.B, env *testenv.Env, k *kustomizev1.Kustomization, pages []livePage) {
	b.Helper()
	for _, p := range pages {
		timed(ctx, b, loaded, route(p.path))
		var page, watched []time.Duration
		for i := range 6 {
			failing := i%2 == 0
			want := map[bool]string{true: "failing", false: "ready"}[failing]
			w := watchOne(b, env, k)
			if err := chromedp.Do(ctx, observe(p.state, want)); err != nil {
				b.Fatal(err)
			}
			start := flip(b, env, k, failing)
			watched = append(watched, w(failing).Sub(start))
			timed(ctx, b, `window.seenAt > 0`)
			seen, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`window.seenAt`))
			if err != nil {
				b.Fatal(err)
			}
			page = append(page, time.UnixMilli(seen).Sub(start))
		}
		pm, wm := median(page), median(watched)
		b.ReportMetric(pm.Seconds(), "s/change-to-"+p.name)
		b.ReportMetric(wm.Seconds(), "s/"+p.name+"-watch-floor")
		b.ReportMetric(pm.Seconds()/wm.Seconds(), "x-"+p.name+"-floor")
		b.Logf("status change to the %s page: median %v (all %v); to a plain watch: median %v", p.name, pm, page, wm)
	}
}

// watchOne starts a watch of k and returns a func that waits until the
// watch sees k's Ready condition with status False (failing) or True, and
// returns when it did.
func watchOne(b *testing.B, env *testenv.Env, k *kustomizev1.Kustomization) func(failing bool) time.Time {
	b.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), &kustomizev1.KustomizationList{},
		client.InNamespace(k.Namespace), client.MatchingFields{"metadata.name": k.Name})
	if err != nil {
		b.Fatal(err)
	}
	return func(failing bool) time.Time {
		defer w.Stop()
		want := map[bool]metav1.ConditionStatus{true: metav1.ConditionFalse, false: metav1.ConditionTrue}[failing]
		for ev := range w.ResultChan() {
			got, ok := ev.Object.(*kustomizev1.Kustomization)
			if ev.Type == watch.Modified && ok && len(got.Status.Conditions) > 0 && got.Status.Conditions[0].Status == want {
				return time.Now()
			}
		}
		b.Fatal("the watch ended")
		return time.Time{}
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
