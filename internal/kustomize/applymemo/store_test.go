package applymemo

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// fleetMemos returns the memos of n Kustomizations of the shape issue 16
// measures (a ConfigMap, a Secret, a ServiceAccount and a Deployment each),
// with random digests, uids and applied digests as the real ones are.
func fleetMemos(seed uint64, n int) []savedMemo {
	rnd := rand.New(rand.NewPCG(seed, seed))
	random := func(size int) []byte {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(rnd.UintN(256))
		}
		return b
	}
	uid := func() types.UID {
		h := hex.EncodeToString(random(16))
		return types.UID(h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:])
	}
	kinds := []schema.GroupKind{{Kind: "ConfigMap"}, {Kind: "Secret"}, {Kind: "ServiceAccount"}, {Group: "apps", Kind: "Deployment"}}
	saved := make([]savedMemo, n)
	for i := range saved {
		ns, name := fmt.Sprintf("team-%04d", i), fmt.Sprintf("app-%04d", i)
		m := savedMemo{Name: types.NamespacedName{Namespace: ns, Name: name}, UID: uid()}
		for _, gk := range kinds {
			m.Records = append(m.Records, ssa.MemoRecord{
				Object:          ssa.ObjMetadata{Namespace: ns, Name: name + "-" + strings.ToLower(gk.Kind), GroupKind: gk},
				Digest:          [sha256.Size]byte(random(sha256.Size)),
				UID:             uid(),
				ResourceVersion: strconv.Itoa(100000 + rnd.IntN(900000)),
				Applied:         base64.RawStdEncoding.EncodeToString(random(18)),
			})
		}
		saved[i] = m
	}
	return saved
}

// sortedSnapshot is a's snapshot in name order (a map's order otherwise).
func sortedSnapshot(a *Memos) []savedMemo {
	s := a.snapshot()
	slices.SortFunc(s, func(x, y savedMemo) int { return strings.Compare(x.Name.String(), y.Name.String()) })
	return s
}

// sortedMemos is saved in name order.
func sortedMemos(saved []savedMemo) []savedMemo {
	s := slices.Clone(saved)
	slices.SortFunc(s, func(x, y savedMemo) int { return strings.Compare(x.Name.String(), y.Name.String()) })
	return s
}

// TestMemoEncoding round-trips memos through encodeMemos and decodeMemos
// and reports the bytes one object's entry takes.
func TestMemoEncoding(t *testing.T) {
	for _, tt := range []struct {
		name string
		memo []savedMemo
	}{
		{"none", nil},
		{"one Kustomization", fleetMemos(1, 1)},
		{"identity kept", func() []savedMemo { m := fleetMemos(2, 2); m[1].Identity = "tenant"; return m }()},
		{"a thousand Kustomizations", fleetMemos(3, 1000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data, err := encodeMemos(tt.memo)
			if err != nil {
				t.Fatal(err)
			}
			if data[0] != memoFormat {
				t.Errorf("first byte %d, want the format %d", data[0], memoFormat)
			}
			got, err := decodeMemos(data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.memo, got); diff != "" {
				t.Errorf("decoded memo differs (-saved +decoded):\n%s", diff)
			}
			if _, objects := memoCounts(tt.memo); objects > 0 {
				t.Logf("%d objects: %d bytes, %.1f bytes per object", objects, len(data), float64(len(data))/float64(objects))
			}
		})
	}
}

// TestMemoDecodingRejects: what is not a memo of this format decodes to
// an error, never to a memo.
func TestMemoDecodingRejects(t *testing.T) {
	good, err := encodeMemos(fleetMemos(4, 3))
	if err != nil {
		t.Fatal(err)
	}
	other := slices.Clone(good)
	other[0] = memoFormat + 1
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"another format", other},
		{"not gzip", []byte{memoFormat, 'n', 'o', 't'}},
		{"cut short", good[:len(good)/2]},
		{"gzip of something else", append([]byte{memoFormat}, gzipOf(t, []byte("not a gob stream"))...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := decodeMemos(tt.data); err == nil {
				t.Errorf("decoded %d memos, want an error", len(got))
			}
		})
	}
}

func gzipOf(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestMemoSplitShards(t *testing.T) {
	for _, tt := range []struct {
		size, shard int
		want        []int
	}{
		{0, 10, []int{0}},
		{9, 10, []int{9}},
		{10, 10, []int{10}},
		{11, 10, []int{10, 1}},
		{30, 10, []int{10, 10, 10}},
		{31, 10, []int{10, 10, 10, 1}},
	} {
		payload := make([]byte, tt.size)
		for i := range payload {
			payload[i] = byte(i)
		}
		parts := splitShards(payload, tt.shard)
		var sizes []int
		var joined []byte
		for _, p := range parts {
			sizes = append(sizes, len(p))
			joined = append(joined, p...)
		}
		if !slices.Equal(sizes, tt.want) || !bytes.Equal(joined, payload) {
			t.Errorf("splitShards(%d bytes, %d) = sizes %v, want %v joined back", tt.size, tt.shard, sizes, tt.want)
		}
	}
}

func TestMemoStoreShardIndex(t *testing.T) {
	s := &Store{name: "weir-kustomize-apply-memo"}
	for name, want := range map[string]int{
		"weir-kustomize-apply-memo-0":              0,
		"weir-kustomize-apply-memo-12":             12,
		"weir-kustomize-apply-memo-":               -1,
		"weir-kustomize-apply-memo":                -1,
		"weir-kustomize-apply-memo-1x":             -1,
		"weir-kustomize-apply-memo-1-apply-0":      -1,
		"weir-kustomize-abc-apply-memo-0":          -1,
		"weir-kustomize-apply-memo-3-apply-memo-0": -1,
	} {
		i, ok := s.shardIndex(name)
		if !ok {
			i = -1
		}
		if i != want {
			t.Errorf("shardIndex(%q) = %d, want %d", name, i, want)
		}
	}
}

// writeCounter counts the writes that go through it.
type writeCounter struct {
	client.Writer
	writes atomic.Int32
}

func (w *writeCounter) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	w.writes.Add(1)
	return w.Writer.Apply(ctx, obj, opts...)
}

func (w *writeCounter) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	w.writes.Add(1)
	return w.Writer.Delete(ctx, obj, opts...)
}

// storeFixture is a store over a test namespace of the API server.
type storeFixture struct {
	t      *testing.T
	env    *testenv.Env
	ns     string
	writes *writeCounter
	log    *testenv.LogBuffer
}

func newStoreFixture(t *testing.T) *storeFixture {
	env := testenv.Get(t)
	return &storeFixture{t: t, env: env, ns: env.Namespace(t), writes: &writeCounter{Writer: env.Client}, log: &testenv.LogBuffer{}}
}

// store returns a store of memos in the fixture's namespace, writing as
// the controller does.
func (f *storeFixture) store(memos *Memos) *Store {
	return NewStore(memos, StoreOptions{
		Namespace: f.ns, Name: "weir-kustomize-apply-memo", Reader: f.env.Client, Writer: f.writes,
		FieldOwner: "kustomize-controller", Log: f.log.Logger(),
	})
}

// shards returns the names and resourceVersions of the memo's Secrets.
func (f *storeFixture) shards() map[string]string {
	f.t.Helper()
	var list corev1.SecretList
	if err := f.env.Client.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		if s.Labels[memoComponentLabel] != memoComponent || s.Labels[memoManagedByLabel] != memoManagedBy {
			f.t.Errorf("Secret %s without the memo's labels: %v", s.Name, s.Labels)
		}
		out[s.Name] = s.ResourceVersion
	}
	return out
}

func (f *storeFixture) wantShards(names ...string) map[string]string {
	f.t.Helper()
	got := f.shards()
	if have := slices.Sorted(maps.Keys(got)); !slices.Equal(have, names) {
		f.t.Fatalf("Secrets %v, want %v", have, names)
	}
	return got
}

// loaded returns the memos a new store loads from the fixture's Secrets.
func (f *storeFixture) loaded() *Memos {
	var memos Memos
	f.store(&memos).load(context.Background())
	return &memos
}

func (f *storeFixture) save(saved []savedMemo) {
	f.t.Helper()
	var memos Memos
	memos.restore(saved)
	if err := f.store(&memos).save(context.Background()); err != nil {
		f.t.Fatal(err)
	}
}

// TestMemoStoreSaveLoad saves the memos of a few Kustomizations into one
// Secret and loads them back into new Memos: the same records, and
// a memo that goes on matching its Kustomization.
func TestMemoStoreSaveLoad(t *testing.T) {
	f := newStoreFixture(t)
	saved := fleetMemos(5, 10)
	saved[3].Identity = "tenant"
	f.save(saved)
	f.wantShards("weir-kustomize-apply-memo-0")

	memos := f.loaded()
	if diff := cmp.Diff(sortedMemos(saved), sortedSnapshot(memos)); diff != "" {
		t.Errorf("loaded memos differ (-saved +loaded):\n%s", diff)
	}
	if v := memos.version(); v != 0 {
		t.Errorf("version %d after the load, want 0 (nothing new to save)", v)
	}
	k := &kustomizev1.Kustomization{}
	k.Namespace, k.Name, k.UID, k.Spec.ServiceAccountName = saved[3].Name.Namespace, saved[3].Name.Name, saved[3].UID, "tenant"
	if got := memos.Of(k).Records(); !cmp.Equal(got, saved[3].Records) {
		t.Errorf("the Kustomization's memo after the load holds %d records, want its %d saved ones", len(got), len(saved[3].Records))
	}
	if !strings.Contains(f.log.String(), `"kustomizations"=10 "objects"=40`) {
		t.Errorf("the load did not log its counts:\n%s", f.log)
	}
	for _, r := range saved[0].Records {
		if d := hex.EncodeToString(r.Digest[:]); strings.Contains(f.log.String(), d) || strings.Contains(f.log.String(), r.Applied) {
			t.Errorf("the log holds a record's digest:\n%s", f.log)
		}
	}
}

// TestMemoStorePrunesTheGone: a save leaves out the memos of
// Kustomizations that do not exist (deleted while the controller was down,
// or their finalizer removed by hand) and of those recreated under the same
// name (another uid); the memo of one that exists is saved.
func TestMemoStorePrunesTheGone(t *testing.T) {
	f := newStoreFixture(t)
	ctx := context.Background()
	live := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: f.ns},
		Spec: kustomizev1.KustomizationSpec{
			Interval:  metav1.Duration{Duration: time.Hour},
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "repo"},
		},
	}
	if err := f.env.Client.Create(ctx, live); err != nil {
		t.Fatal(err)
	}
	saved := fleetMemos(7, 3)
	saved[0].Name, saved[0].UID = types.NamespacedName{Namespace: f.ns, Name: "app"}, live.UID
	saved[1].Name = types.NamespacedName{Namespace: f.ns, Name: "gone"}
	saved[2].Name = types.NamespacedName{Namespace: f.ns, Name: "app-recreated"}
	recreated := live.DeepCopy()
	recreated.ResourceVersion, recreated.UID, recreated.Name = "", "", "app-recreated"
	if err := f.env.Client.Create(ctx, recreated); err != nil {
		t.Fatal(err)
	}

	var memos Memos
	memos.restore(saved)
	s := f.store(&memos)
	s.kustomizations = f.env.Client
	if err := s.save(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(saved[:1], sortedSnapshot(f.loaded())); diff != "" {
		t.Errorf("saved memos (-want +got):\n%s", diff)
	}
	if s.saved != memos.version() {
		t.Errorf("the pruned memo was not counted as saved: saved %d, version %d", s.saved, memos.version())
	}
}

// TestMemoStoreShards: a memo of more than memoShardBytes is cut over
// several Secrets that the API server accepts and that load back whole; a
// smaller save deletes the shards it no longer needs.
func TestMemoStoreShards(t *testing.T) {
	f := newStoreFixture(t)
	large := fleetMemos(6, 3000) // 12,000 objects, over 900 KiB
	f.save(large)
	f.wantShards("weir-kustomize-apply-memo-0", "weir-kustomize-apply-memo-1")
	if diff := cmp.Diff(sortedMemos(large), sortedSnapshot(f.loaded())); diff != "" {
		t.Errorf("loaded memos differ (-saved +loaded):\n%s", diff)
	}

	small := fleetMemos(7, 5)
	f.save(small)
	f.wantShards("weir-kustomize-apply-memo-0")
	if diff := cmp.Diff(sortedMemos(small), sortedSnapshot(f.loaded())); diff != "" {
		t.Errorf("loaded memos after the smaller save differ (-saved +loaded):\n%s", diff)
	}
}

// TestMemoStoreCorrupt: Secrets that do not hold a whole memo of this
// format load as no memo, logged once without their content, and the
// store goes on.
func TestMemoStoreCorrupt(t *testing.T) {
	const marker = "CONTENT-THAT-MUST-NOT-BE-LOGGED"
	sum := func(parts ...string) string {
		d := sha256.Sum256([]byte(strings.Join(parts, "")))
		return hex.EncodeToString(d[:])
	}
	good, err := encodeMemos(fleetMemos(8, 2))
	if err != nil {
		t.Fatal(err)
	}
	garbage := string([]byte{memoFormat}) + marker
	for _, tt := range []struct {
		name   string
		shards []map[string]string
	}{
		{"not gzip", []map[string]string{{memoDataKey: garbage, memoShardsKey: "1", memoSumKey: sum(garbage)}}},
		{"another format", []map[string]string{{memoDataKey: "\x09" + marker, memoShardsKey: "1", memoSumKey: sum("\x09" + marker)}}},
		{"wrong digest", []map[string]string{{memoDataKey: string(good), memoShardsKey: "1", memoSumKey: sum(marker)}}},
		{"no shard count", []map[string]string{{memoDataKey: string(good), memoSumKey: sum(string(good))}}},
		{"shard count not a number", []map[string]string{{memoDataKey: string(good), memoShardsKey: marker, memoSumKey: sum(string(good))}}},
		{"a shard missing", []map[string]string{{memoDataKey: string(good), memoShardsKey: "2", memoSumKey: sum(string(good))}}},
		{"shards of two saves", []map[string]string{
			{memoDataKey: string(good[:10]), memoShardsKey: "2", memoSumKey: sum(string(good))},
			{memoDataKey: marker, memoShardsKey: "2", memoSumKey: sum(marker)},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newStoreFixture(t)
			for i, data := range tt.shards {
				sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "weir-kustomize-apply-memo-" + strconv.Itoa(i)},
					StringData: data}
				f.env.Create(t, sec)
			}
			memos := f.loaded()
			if n := len(memos.snapshot()); n != 0 {
				t.Errorf("%d memos loaded from a corrupt Secret, want none", n)
			}
			log := f.log.String()
			if strings.Count(log, "apply memo not loaded") != 1 {
				t.Errorf("want one error logged, got:\n%s", log)
			}
			if strings.Contains(log, marker) || strings.Contains(log, sum(string(good))) {
				t.Errorf("the log holds the Secret's content:\n%s", log)
			}
		})
	}
}

// TestMemoStoreNoWriteWhenUnchanged starts a store over saved Secrets, as
// a restart over a converged fleet does: it loads them and, as nothing
// changes, writes nothing at its saves nor at its stop.
func TestMemoStoreNoWriteWhenUnchanged(t *testing.T) {
	f := newStoreFixture(t)
	saved := fleetMemos(9, 20)
	f.save(saved)
	before := f.wantShards("weir-kustomize-apply-memo-0")
	f.writes.writes.Store(0)

	var memos Memos
	s := f.store(&memos)
	s.every = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Start(ctx) }()
	s.Wait(ctx)
	if diff := cmp.Diff(sortedMemos(saved), sortedSnapshot(&memos)); diff != "" {
		t.Errorf("loaded memos differ (-saved +loaded):\n%s", diff)
	}
	k := &kustomizev1.Kustomization{}
	k.Namespace, k.Name, k.UID = saved[0].Name.Namespace, saved[0].Name.Name, saved[0].UID
	memos.Of(k) // a reconcile of a Kustomization whose memo was loaded
	time.Sleep(300 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := f.writes.writes.Load(); n != 0 {
		t.Errorf("%d writes by a store whose memo did not change, want none", n)
	}
	if after := f.shards(); !cmp.Equal(before, after) {
		t.Errorf("Secrets written: resourceVersions %v, were %v", after, before)
	}
}

// TestMemoStoreSavesChanges: a memo changed after the load is saved at
// the next tick, and a change after that at the stop.
func TestMemoStoreSavesChanges(t *testing.T) {
	for _, tt := range []struct {
		name  string
		every time.Duration
	}{
		{"at the tick", 50 * time.Millisecond},
		{"at stop", time.Hour},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newStoreFixture(t)
			var memos Memos
			s := f.store(&memos)
			s.every = tt.every
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error)
			go func() { done <- s.Start(ctx) }()
			s.Wait(ctx)
			f.wantShards()

			saved := fleetMemos(10, 3)
			memos.restore(saved)
			k := &kustomizev1.Kustomization{}
			k.Namespace, k.Name, k.UID = "other", "new", "uid-new"
			memos.Of(k) // a new Kustomization: the version moves
			if tt.every == time.Hour {
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			} else {
				// The shard shows before the store logs its save, which
				// it does once the write has returned.
				testenv.Eventually(t, 10*time.Second, func(context.Context) (bool, string) {
					return len(f.shards()) == 1 && strings.Contains(f.log.String(), "apply memo saved"), "not saved yet"
				})
			}
			if diff := cmp.Diff(sortedMemos(saved), sortedSnapshot(f.loaded())); diff != "" {
				t.Errorf("saved memos differ (-memo +loaded):\n%s", diff)
			}
			if !strings.Contains(f.log.String(), "apply memo saved") {
				t.Errorf("the save was not logged:\n%s", f.log)
			}
		})
	}
}

// TestMemoStoreMissing: no Secret is no memo, and no error.
func TestMemoStoreMissing(t *testing.T) {
	f := newStoreFixture(t)
	if n := len(f.loaded().snapshot()); n != 0 {
		t.Errorf("%d memos loaded from no Secret", n)
	}
	if strings.Contains(f.log.String(), "not loaded") {
		t.Errorf("a missing memo logged as an error:\n%s", f.log)
	}
}

// TestMemoStoreWaitIsBounded: reconciles do not wait for a store that
// never starts longer than its bound, nor for one without Secrets.
func TestMemoStoreWaitIsBounded(t *testing.T) {
	var none *Store
	none.Wait(context.Background())
	s := NewStore(&Memos{}, StoreOptions{Namespace: "ns", Name: "name", Log: logr.Discard()})
	s.waitFor = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	s.Wait(ctx)
	if ctx.Err() == nil {
		t.Error("wait returned before the load or its bound")
	}
	start := time.Now()
	s.Wait(context.Background())
	if took := time.Since(start); took > 2*s.waitFor {
		t.Errorf("wait took %s, more than its bound %s", took, s.waitFor)
	}
}
