package applymemo

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

// The apply memo's Secrets (docs/design/0020-large-and-idle-fleets.md,
// "Memo across restarts").
const (
	// memoFormat is the first byte of a saved memo: a store that reads
	// another one starts empty.
	memoFormat byte = 1
	// memoShardBytes is the most memo bytes one Secret holds (the API
	// server takes at most 1 MiB of data per Secret).
	memoShardBytes = 900 << 10
	// memoMaxShards bounds what a load reads: 90 MiB of memo.
	memoMaxShards = 100
	// memoMaxDecoded bounds what a load decompresses.
	memoMaxDecoded = 1 << 30
	// memoSaveEvery is how often the memo is saved when it changed.
	memoSaveEvery = 2 * time.Minute
	// memoTimeout bounds a load and the save at stop.
	memoTimeout = 5 * time.Second
	// memoWait bounds how long reconciles wait for the load.
	memoWait = 2 * memoTimeout

	memoDataKey   = "memo"   // this shard's part of the memo
	memoShardsKey = "shards" // how many shards the memo has
	memoSumKey    = "sha256" // of the whole memo, the same in every shard

	memoManagedByLabel = "app.kubernetes.io/managed-by"
	memoManagedBy      = "weir"
	memoComponentLabel = "app.kubernetes.io/component"
	memoComponent      = "apply-memo"
)

// Store keeps Memos in Secrets of the controller's namespace, so that a
// restart does not dry-run every object of a fleet nobody changed: loaded
// once when the controller starts leading, before its reconciles use a
// memo (Wait), and saved every memoSaveEvery and once at stop when it
// changed since. The Secrets are named <name>-0, <name>-1, …: the memo
// (memoFormat, then the gzipped gob of Memos.snapshot) cut into
// memoShardBytes parts, each Secret holding its part, the number of parts
// and the digest of the whole; the one of part 0 is written last, so that
// a save cut short reads as a mismatch, never as a mix of two saves. A
// memo that cannot be read is logged and the controller starts with none:
// what it holds is a claim that Apply checks against every object anyway
// (ssa.Memo). Nothing of the memo's content is logged, only counts and
// sizes.
type Store struct {
	memos *Memos
	// reader, writer, kustomizations, fieldOwner, namespace, name and log
	// are StoreOptions'.
	reader         client.Reader
	writer         client.Writer
	kustomizations client.Reader
	fieldOwner     string
	namespace      string
	name           string
	log            logr.Logger
	// shardBytes, every and waitFor are memoShardBytes, memoSaveEvery
	// and memoWait unless a test sets them.
	shardBytes int
	every      time.Duration
	waitFor    time.Duration

	loaded   chan struct{}
	loadOnce sync.Once
	waitOnce sync.Once
	// saved is Memos.version at the last load or save (Start's
	// goroutine only).
	saved uint64
}

// StoreOptions say where a Store keeps its memos and how it reaches them.
type StoreOptions struct {
	// Namespace and Name name the Secrets: Name-0, Name-1, … in Namespace.
	Namespace string
	Name      string
	// Reader reads uncached (a cached Get would start a cluster-wide
	// informer of Secrets); Writer applies and deletes, as FieldOwner.
	Reader     client.Reader
	Writer     client.Writer
	FieldOwner string
	// Kustomizations lists the Kustomizations that exist (the manager's
	// cache) so that a save leaves out the memos of those gone; nil keeps
	// every memo.
	Kustomizations client.Reader
	Log            logr.Logger
}

// NewStore returns a store of memos in the Secrets opts name.
func NewStore(memos *Memos, opts StoreOptions) *Store {
	return &Store{
		memos: memos, reader: opts.Reader, writer: opts.Writer, kustomizations: opts.Kustomizations,
		fieldOwner: opts.FieldOwner, namespace: opts.Namespace, name: opts.Name, log: opts.Log,
		shardBytes: memoShardBytes, every: memoSaveEvery, waitFor: memoWait, loaded: make(chan struct{}),
	}
}

// NeedLeaderElection makes only the leader load and save: it is the one
// that reconciles.
func (s *Store) NeedLeaderElection() bool { return true }

// Start loads the memo, then saves it every s.every and once more when
// ctx ends, each time it changed since.
func (s *Store) Start(ctx context.Context) error {
	s.load(ctx)
	tick := time.NewTicker(s.every)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			s.saveIfChanged(ctx)
		case <-ctx.Done():
			stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), memoTimeout)
			s.saveIfChanged(stop)
			cancel()
			return nil
		}
	}
}

// Wait returns once the memo was loaded, or s.waitFor after the first
// Wait, or when ctx ends. A nil store has nothing to wait for.
func (s *Store) Wait(ctx context.Context) {
	if s == nil {
		return
	}
	s.waitOnce.Do(func() { time.AfterFunc(s.waitFor, s.markLoaded) })
	select {
	case <-s.loaded:
	case <-ctx.Done():
	}
}

func (s *Store) markLoaded() { s.loadOnce.Do(func() { close(s.loaded) }) }

// load restores the saved memo into s.memos; one it cannot read is
// logged and left out.
func (s *Store) load(ctx context.Context) {
	defer s.markLoaded()
	ctx, cancel := context.WithTimeout(ctx, memoTimeout)
	defer cancel()
	payload, shards, err := s.read(ctx)
	var saved []savedMemo
	if err == nil && payload != nil {
		saved, err = decodeMemos(payload)
	}
	if err != nil {
		s.log.Error(err, "apply memo not loaded: each object is dry-run at its next apply", "secret", s.shardName(0))
		saved = nil
	}
	s.memos.restore(saved)
	s.saved = s.memos.version()
	kustomizations, objects := memoCounts(saved)
	s.log.Info("apply memo loaded", "kustomizations", kustomizations, "objects", objects, "bytes", len(payload), "shards", shards)
}

// read returns the saved memo and the number of Secrets it is in; nil
// when there is none.
func (s *Store) read(ctx context.Context) ([]byte, int, error) {
	first, err := s.getShard(ctx, 0)
	if apierrors.IsNotFound(err) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	n, err := strconv.Atoi(string(first.Data[memoShardsKey]))
	if err != nil || n < 1 || n > memoMaxShards {
		return nil, 0, fmt.Errorf("the shard count of Secret %s is not from 1 to %d", first.Name, memoMaxShards)
	}
	sum := string(first.Data[memoSumKey])
	payload := first.Data[memoDataKey]
	for i := 1; i < n; i++ {
		sh, err := s.getShard(ctx, i)
		if err != nil {
			return nil, 0, fmt.Errorf("shard %d of %d: %w", i, n, err)
		}
		if string(sh.Data[memoShardsKey]) != strconv.Itoa(n) || string(sh.Data[memoSumKey]) != sum {
			return nil, 0, fmt.Errorf("the Secrets %s and %s are from two saves", first.Name, sh.Name)
		}
		payload = append(payload, sh.Data[memoDataKey]...)
	}
	if got := sha256.Sum256(payload); hex.EncodeToString(got[:]) != sum {
		return nil, 0, fmt.Errorf("the %d shards of %s do not match their digest", n, s.name)
	}
	return payload, n, nil
}

func (s *Store) getShard(ctx context.Context, i int) (*corev1.Secret, error) {
	var sec corev1.Secret
	if err := s.reader.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: s.shardName(i)}, &sec); err != nil {
		return nil, fmt.Errorf("reading Secret %s/%s: %w", s.namespace, s.shardName(i), err)
	}
	return &sec, nil
}

func (s *Store) shardName(i int) string { return s.name + "-" + strconv.Itoa(i) }

// saveIfChanged saves the memo when it changed since the last load or
// save; a failed save is logged and tried again at the next one.
func (s *Store) saveIfChanged(ctx context.Context) {
	if s.memos.version() == s.saved {
		return
	}
	if err := s.save(ctx); err != nil {
		s.log.Error(err, "apply memo not saved")
	}
}

// save writes the memo's shards, part 0 last, and deletes the shards of
// an earlier, larger save.
func (s *Store) save(ctx context.Context) error {
	s.prune(ctx)
	version := s.memos.version()
	saved := s.memos.snapshot()
	payload, err := encodeMemos(saved)
	if err != nil {
		return err
	}
	parts := splitShards(payload, s.shardBytes)
	if len(parts) > memoMaxShards {
		return fmt.Errorf("the apply memo needs %d Secrets, more than %d", len(parts), memoMaxShards)
	}
	digest := sha256.Sum256(payload)
	sum := hex.EncodeToString(digest[:])
	for i := len(parts) - 1; i >= 0; i-- {
		if err := s.writeShard(ctx, i, len(parts), sum, parts[i]); err != nil {
			return err
		}
	}
	if err := s.deleteShardsFrom(ctx, len(parts)); err != nil {
		return err
	}
	s.saved = version
	kustomizations, objects := memoCounts(saved)
	s.log.V(1).Info("apply memo saved", "kustomizations", kustomizations, "objects", objects, "bytes", len(payload), "shards", len(parts))
	return nil
}

// prune drops the memos of Kustomizations that no longer exist. A list
// that fails (the cache not synced before a stop) prunes nothing: a memo
// kept too long costs bytes, one dropped too soon a dry-run per object.
func (s *Store) prune(ctx context.Context) {
	if s.kustomizations == nil {
		return
	}
	var list kustomizev1.KustomizationList
	if err := s.kustomizations.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		s.log.V(1).Info("apply memo not pruned", "error", err.Error())
		return
	}
	live := make(map[types.NamespacedName]types.UID, len(list.Items))
	for i := range list.Items {
		k := &list.Items[i]
		live[types.NamespacedName{Namespace: k.Namespace, Name: k.Name}] = k.UID
	}
	if dropped := s.memos.keepOnly(live); dropped > 0 {
		s.log.V(1).Info("apply memo pruned", "kustomizations", dropped)
	}
}

func (s *Store) writeShard(ctx context.Context, i, n int, sum string, part []byte) error {
	sec := corev1ac.Secret(s.shardName(i), s.namespace).
		WithLabels(map[string]string{memoManagedByLabel: memoManagedBy, memoComponentLabel: memoComponent}).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{memoDataKey: part, memoShardsKey: []byte(strconv.Itoa(n)), memoSumKey: []byte(sum)})
	if err := s.writer.Apply(ctx, sec, client.FieldOwner(s.fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing Secret %s/%s: %w", s.namespace, s.shardName(i), err)
	}
	return nil
}

// deleteShardsFrom deletes this store's shards numbered n and up.
func (s *Store) deleteShardsFrom(ctx context.Context, n int) error {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := s.reader.List(ctx, &list, client.InNamespace(s.namespace),
		client.MatchingLabels{memoManagedByLabel: memoManagedBy, memoComponentLabel: memoComponent}); err != nil {
		return fmt.Errorf("listing the apply memo's Secrets in %s: %w", s.namespace, err)
	}
	for i := range list.Items {
		item := &list.Items[i]
		if i, ok := s.shardIndex(item.Name); !ok || i < n {
			continue
		}
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: item.Name}}
		if err := s.writer.Delete(ctx, sec); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Secret %s/%s: %w", s.namespace, item.Name, err)
		}
	}
	return nil
}

// shardIndex is the number of this store's shard called name.
func (s *Store) shardIndex(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, s.name+"-")
	if !ok || rest == "" || strings.TrimLeft(rest, "0123456789") != "" {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	return i, err == nil
}

// encodeMemos is the memo as saved: memoFormat, then the gzipped gob of
// saved.
func encodeMemos(saved []savedMemo) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte(memoFormat)
	zw := gzip.NewWriter(&buf)
	if err := gob.NewEncoder(zw).Encode(saved); err != nil {
		return nil, fmt.Errorf("encoding the apply memo: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing the apply memo: %w", err)
	}
	return buf.Bytes(), nil
}

var errMemoFormat = errors.New("not an apply memo of this version")

// decodeMemos reads what encodeMemos wrote.
func decodeMemos(data []byte) ([]savedMemo, error) {
	if len(data) == 0 || data[0] != memoFormat {
		return nil, errMemoFormat
	}
	zr, err := gzip.NewReader(bytes.NewReader(data[1:]))
	if err != nil {
		return nil, fmt.Errorf("decompressing the apply memo: %w", err)
	}
	var saved []savedMemo
	if err := gob.NewDecoder(io.LimitReader(zr, memoMaxDecoded)).Decode(&saved); err != nil {
		return nil, fmt.Errorf("decoding the apply memo: %w", err)
	}
	return saved, nil
}

// splitShards cuts payload into parts of at most size bytes; one part at
// least.
func splitShards(payload []byte, size int) [][]byte {
	parts := [][]byte{}
	for len(payload) > size {
		parts = append(parts, payload[:size])
		payload = payload[size:]
	}
	return append(parts, payload)
}

// memoCounts is how many Kustomizations and objects saved holds.
func memoCounts(saved []savedMemo) (kustomizations, objects int) {
	for _, m := range saved {
		objects += len(m.Records)
	}
	return len(saved), objects
}
