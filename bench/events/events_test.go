package events

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		if err := runChild(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	benchenv.Main(m, nil, 0)
}

// alerts is how many Alerts (and Providers, and objects) events spread
// over; each event is selected by exactly one Alert.
const alerts = 50

// types are the Provider types, each delivering over HTTP to a sink of
// its own on 127.0.0.1; Alert i uses types[i%10].
var types = []string{
	notificationv1beta3.GenericProvider, notificationv1beta3.GenericHMACProvider, notificationv1beta3.SlackProvider,
	notificationv1beta3.DiscordProvider, notificationv1beta3.MSTeamsProvider, notificationv1beta3.GoogleChatProvider,
	notificationv1beta3.RocketProvider, notificationv1beta3.WebexProvider, notificationv1beta3.AlertManagerProvider,
	notificationv1beta3.GrafanaProvider,
}

// seqMark is how a sink finds which event a request carries: every
// payload quotes the event's message, which holds "evq<seq>x".
var seqMark = regexp.MustCompile(`evq([0-9]+)x`)

// BenchmarkEventServer posts WEIR_BENCH_EVENTS_RATE events a second (1,000)
// for WEIR_BENCH_EVENTS_SECONDS (10) to the notification controller,
// running alone in a child process against the real API server, and
// reports what reached the sinks and what it cost; then the floor: the
// same number of requests posted by the benchmark straight to the sinks.
func BenchmarkEventServer(b *testing.B) {
	rate := benchenv.Counts(b, "WEIR_BENCH_EVENTS_RATE", []int{1000})[0]
	seconds := benchenv.Counts(b, "WEIR_BENCH_EVENTS_SECONDS", []int{10})[0]
	n := rate * seconds
	env := testenv.Get(b)
	for b.Loop() {
		ns := env.Namespace(b)
		sinks := newSinks(b)
		createAlerts(b, env, ns, sinks)
		kubeconfig := writeKubeconfig(b, env)
		addr := benchenv.FreeAddr(b)
		ctl := startController(b, kubeconfig, addr, 5*time.Minute)
		post := &poster{url: "http://" + addr + "/", ns: ns, client: newClient()}
		post.warmUp(b, sinks)
		sinks.reset()

		load0 := benchenv.LoadAverage()
		cpu0 := benchenv.CPUTime()
		run := post.run(b, n, rate)
		harnessCPU := benchenv.CPUTime() - cpu0
		sinks.wait(run.wantDelivered(), 30*time.Second)
		cpu, rss := ctl.stop(b)
		evLat := sinks.latencies(run.start)
		perType := sinks.counts()

		sinks.reset()
		cpu1 := benchenv.CPUTime()
		floor := postDirect(b, sinks, run, rate)
		floorCPU := benchenv.CPUTime() - cpu1
		sinks.wait(len(floor.start), 30*time.Second)
		floorLat := sinks.latencies(floor.start)

		delivered := 0
		for _, c := range perType {
			delivered += c
		}
		p50, p99 := quantile(evLat, 0.5), quantile(evLat, 0.99)
		f50, f99 := quantile(floorLat, 0.5), quantile(floorLat, 0.99)
		b.ReportMetric(float64(n), "events-posted")
		b.ReportMetric(float64(run.accepted.Load()), "accepted")
		b.ReportMetric(float64(run.limited.Load()), "rate-limited")
		b.ReportMetric(float64(delivered), "delivered")
		b.ReportMetric(ms(p50), "ms-p50-deliver")
		b.ReportMetric(ms(p99), "ms-p99-deliver")
		b.ReportMetric(ms(f50), "ms-p50-floor")
		b.ReportMetric(ms(f99), "ms-p99-floor")
		b.ReportMetric(ms(p50)/ms(f50), "x-floor-p50")
		b.ReportMetric(ms(p99)/ms(f99), "x-floor-p99")
		b.ReportMetric(ms(quantile(run.answers(), 0.99)), "ms-p99-post-answer")
		b.ReportMetric(ms(quantile(floor.answers(), 0.99)), "ms-p99-floor-answer")
		b.ReportMetric(cpu.Seconds(), "controller-cpu-s")
		b.ReportMetric(rss, "controller-MiB-peak-rss")
		b.ReportMetric(harnessCPU.Seconds()/floorCPU.Seconds(), "x-harness-cpu-floor")
		var counts []string
		for _, t := range types {
			counts = append(counts, fmt.Sprintf("%s=%d", t, perType[t]))
		}
		b.Logf("load average %s before, %s after; %d events in %s (%.0f/s offered, %d late by >10ms); "+
			"delivered by type: %s; other answers %d; sink requests without a mark %d; "+
			"harness CPU %.2fs during the events, %.2fs during the floor; controller errors: %s",
			load0, benchenv.LoadAverage(), n, run.elapsed.Round(time.Millisecond), float64(n)/run.elapsed.Seconds(), run.late.Load(),
			strings.Join(counts, " "), run.other.Load(), sinks.unmarked.Load(),
			harnessCPU.Seconds(), floorCPU.Seconds(), firstLines(ctl.stderr.String(), 3))
	}
}

// sinks are the local services the Providers post to: one server per
// type, recording when each event's request arrived.
type sinks struct {
	servers  map[string]*httptest.Server
	mu       sync.Mutex
	got      map[string]map[int]time.Time // type -> seq -> arrival
	total    atomic.Int64
	unmarked atomic.Int64
}

func newSinks(b *testing.B) *sinks {
	s := &sinks{servers: map[string]*httptest.Server{}}
	s.reset()
	for _, t := range types {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			at := time.Now()
			body, _ := io.ReadAll(r.Body)
			m := seqMark.FindSubmatch(body)
			if m == nil {
				s.unmarked.Add(1)
			} else {
				seq, _ := strconv.Atoi(string(m[1]))
				s.mu.Lock()
				if _, dup := s.got[t][seq]; !dup {
					s.got[t][seq] = at
					s.total.Add(1)
				}
				s.mu.Unlock()
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"ok":true}`))
		}))
		b.Cleanup(srv.Close)
		s.servers[t] = srv
	}
	return s
}

func (s *sinks) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = map[string]map[int]time.Time{}
	for _, t := range types {
		s.got[t] = map[int]time.Time{}
	}
	s.total.Store(0)
	s.unmarked.Store(0)
}

// wait waits until want requests arrived or timeout passed.
func (s *sinks) wait(want int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for s.total.Load() < int64(want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *sinks) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for t, m := range s.got {
		out[t] = len(m)
	}
	return out
}

// latencies are arrival minus start for every request that arrived.
func (s *sinks) latencies(start []time.Time) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Duration
	for _, m := range s.got {
		for seq, at := range m {
			if seq < len(start) && !start[seq].IsZero() {
				out = append(out, at.Sub(start[seq]))
			}
		}
	}
	return out
}

// createAlerts creates the Providers (and the Secrets two types need) and
// the Alerts: Alert i selects GitRepository obj-i through Provider i.
func createAlerts(b *testing.B, env *testenv.Env, ns string, s *sinks) {
	b.Helper()
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "token"},
		StringData: map[string]string{"token": "bench-token"}}
	if err := env.Client.Create(ctx, secret); err != nil {
		b.Fatal(err)
	}
	for i := range alerts {
		kind := types[i%len(types)]
		spec := notificationv1beta3.ProviderSpec{Type: kind, Address: s.servers[kind].URL + "/" + objName(i)}
		switch kind {
		case notificationv1beta3.GenericHMACProvider:
			spec.SecretRef = &meta.LocalObjectReference{Name: "token"}
		case notificationv1beta3.WebexProvider:
			spec.SecretRef, spec.Channel = &meta.LocalObjectReference{Name: "token"}, "room"
		}
		p := &notificationv1beta3.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: objName(i)}, Spec: spec}
		a := &notificationv1beta3.Alert{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: objName(i)},
			Spec: notificationv1beta3.AlertSpec{
				ProviderRef:  meta.LocalObjectReference{Name: objName(i)},
				EventSources: []notificationv1.CrossNamespaceObjectReference{{Kind: sourcev1.GitRepositoryKind, Name: objName(i)}},
			}}
		if err := env.Client.Create(ctx, p); err != nil {
			b.Fatal(err)
		}
		if err := env.Client.Create(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}

func objName(i int) string { return fmt.Sprintf("obj-%02d", i) }

func writeKubeconfig(b *testing.B, env *testenv.Env) string {
	b.Helper()
	path := b.TempDir() + "/kubeconfig"
	if err := os.WriteFile(path, testenv.KubeConfig(b, env.Config, nil), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

func newClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 1024, 1024
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

// poster sends the events.
type poster struct {
	url    string
	ns     string
	client *http.Client
}

// run is one paced series of requests.
type run struct {
	start                          []time.Time     // by seq: when its POST began
	answer                         []time.Duration // by seq: how long the POST took to answer
	original                       []bool          // by seq: a first event, not a repeat
	accepted, limited, other, late atomic.Int64
	elapsed                        time.Duration
	startAt                        time.Time
}

// wantDelivered is how many deliveries the accepted first events make:
// one each (one Alert selects each object).
func (r *run) wantDelivered() int {
	n := 0
	for _, o := range r.original {
		if o {
			n++
		}
	}
	return n
}

func (r *run) answers() []time.Duration {
	var out []time.Duration
	for _, a := range r.answer {
		if a > 0 {
			out = append(out, a)
		}
	}
	return out
}

// event seq concerns obj-(seq%50). Its message is new, except for the
// last tenth of every hundred, which repeat the event of 50 before (same
// object, same message): Flux's rate limit answers those 429.
func (p *poster) event(seq int) (events.Event, bool) {
	msgSeq, original := seq, true
	if seq%100 >= 90 {
		msgSeq, original = seq-50, false
	}
	return events.Event{
		InvolvedObject: corev1.ObjectReference{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.GitRepositoryKind,
			Namespace: p.ns, Name: objName(seq % alerts)},
		Severity: events.SeverityInfo, Timestamp: time.Now().UTC(), Reason: "NewArtifact",
		Message:             fmt.Sprintf("stored artifact for revision evq%dx", msgSeq),
		Metadata:            map[string]string{"source.toolkit.fluxcd.io/revision": "main@sha1:" + strconv.Itoa(msgSeq)},
		ReportingController: "source-controller",
	}, original
}

// warmUp sends one event to each Alert and waits until every sink has it,
// so that the caches are filled and connections open.
func (p *poster) warmUp(b *testing.B, s *sinks) {
	b.Helper()
	for i := range alerts {
		e, _ := p.event(0)
		e.InvolvedObject.Name = objName(i)
		e.Message = fmt.Sprintf("warm-up evq%dx", 1_000_000+i)
		body, _ := json.Marshal(e)
		resp, err := p.client.Post(p.url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
	s.wait(alerts, time.Minute)
	if got := s.total.Load(); got != alerts {
		b.Fatalf("warm-up: sinks got %d of %d events", got, alerts)
	}
}

// run posts n events at rate a second, each from its own goroutine at its
// time, so that a slow answer never delays the next event.
func (p *poster) run(b *testing.B, n, rate int) *run {
	b.Helper()
	r := &run{start: make([]time.Time, n), answer: make([]time.Duration, n), original: make([]bool, n)}
	bodies := make([][]byte, n)
	for seq := range n {
		e, original := p.event(seq)
		bodies[seq], _ = json.Marshal(e)
		r.original[seq] = original
	}
	pace(r, n, rate, func(seq int) {
		resp, err := p.client.Post(p.url, "application/json", bytes.NewReader(bodies[seq]))
		r.answer[seq] = time.Since(r.start[seq])
		if err != nil {
			r.other.Add(1)
			r.original[seq] = false
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusAccepted:
			r.accepted.Add(1)
		case http.StatusTooManyRequests:
			r.limited.Add(1)
			r.original[seq] = false
		default:
			r.other.Add(1)
			r.original[seq] = false
		}
	})
	return r
}

// pace calls send(seq) for every seq at its time, start + seq/rate, from
// a goroutine of its own, and waits for them all.
func pace(r *run, n, rate int, send func(int)) {
	var wg sync.WaitGroup
	r.startAt = time.Now()
	step := time.Second / time.Duration(rate)
	for seq := range n {
		at := r.startAt.Add(time.Duration(seq) * step)
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		} else if d < -10*time.Millisecond {
			r.late.Add(1)
		}
		r.start[seq] = time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			send(seq)
		}()
	}
	r.elapsed = time.Since(r.startAt)
	wg.Wait()
}

// postDirect is the floor: one request to the sink of the type each
// delivered event went to, at the same rate, with a payload of the
// generic type's size, straight from the benchmark.
func postDirect(b *testing.B, s *sinks, events *run, rate int) *run {
	b.Helper()
	var seqs []int
	for seq, o := range events.original {
		if o {
			seqs = append(seqs, seq)
		}
	}
	client := newClient()
	r := &run{start: make([]time.Time, len(seqs)), answer: make([]time.Duration, len(seqs)), original: make([]bool, len(seqs))}
	pad := strings.Repeat("x", 400)
	pace(r, len(seqs), rate, func(i int) {
		seq := seqs[i]
		kind := types[(seq%alerts)%len(types)]
		body := fmt.Sprintf(`{"message":"stored artifact for revision evq%dx","pad":%q}`, i, pad)
		resp, err := client.Post(s.servers[kind].URL+"/"+objName(seq%alerts), "application/json", strings.NewReader(body))
		r.answer[i] = time.Since(r.start[i])
		if err != nil {
			r.other.Add(1)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		r.accepted.Add(1)
		r.original[i] = true
	})
	return r
}

// quantile is the q-quantile of ds (0 when empty).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// firstLines is the first n lines of s, for the log.
func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	if len(lines) == 1 && lines[0] == "" {
		return "none"
	}
	return strings.Join(lines, " | ")
}
