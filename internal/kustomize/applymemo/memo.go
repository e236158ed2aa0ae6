package applymemo

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// Memos keeps one ssa.Memo per Kustomization, so that a reconcile
// whose objects nobody wrote since the last one skips their dry-runs
// (docs/design/0020-large-and-idle-fleets.md). A memo belongs to the
// Kustomization's uid and to the identity it applies as: a new
// Kustomization of the same name, or a new spec.serviceAccountName (whose
// permissions only a dry-run would test), starts from nothing. Kustomizations
// that apply to a remote cluster get none: the kubeconfig Secret may point
// elsewhere or carry other credentials from one reconcile to the next.
// The zero value is ready to use.
type Memos struct {
	mu    sync.Mutex
	memos map[types.NamespacedName]applyMemo
	// changes counts memos added and forgotten (with the versions of
	// those forgotten), so that version only ever grows.
	changes uint64
}

type applyMemo struct {
	uid      types.UID
	identity string
	memo     *ssa.Memo
}

// Of returns obj's memo, nil when it gets none.
func (a *Memos) Of(obj *kustomizev1.Kustomization) *ssa.Memo {
	if obj.Spec.KubeConfig != nil {
		return nil
	}
	name := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
	a.mu.Lock()
	defer a.mu.Unlock()
	m, ok := a.memos[name]
	if ok && m.uid == obj.UID && m.identity == obj.Spec.ServiceAccountName {
		return m.memo
	}
	if a.memos == nil {
		a.memos = map[types.NamespacedName]applyMemo{}
	}
	if ok {
		a.changes += m.memo.Version() + 1
	}
	m = applyMemo{uid: obj.UID, identity: obj.Spec.ServiceAccountName, memo: ssa.NewMemo()}
	a.memos[name] = m
	a.changes++
	return m.memo
}

// Forget drops the memo of name (the Kustomization is gone).
func (a *Memos) Forget(name types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if m, ok := a.memos[name]; ok {
		a.changes += m.memo.Version() + 1
		delete(a.memos, name)
	}
}

// keepOnly drops the memos of Kustomizations live does not hold (by name
// and uid): one deleted while the controller was down, or whose finalizer
// was removed by hand, is never finalized here and would be saved again
// and again. It returns how many it dropped.
func (a *Memos) keepOnly(live map[types.NamespacedName]types.UID) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	dropped := 0
	for name, m := range a.memos {
		if uid, ok := live[name]; !ok || uid != m.uid {
			a.changes += m.memo.Version() + 1
			delete(a.memos, name)
			dropped++
		}
	}
	return dropped
}

// savedMemo is one Kustomization's memo as a Store keeps it. The gob a
// Store saves matches fields by name: one renamed loads empty from the
// memos saved before.
type savedMemo struct {
	Name     types.NamespacedName
	UID      types.UID
	Identity string
	Records  []ssa.MemoRecord
}

// snapshot returns every memo's records.
func (a *Memos) snapshot() []savedMemo {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]savedMemo, 0, len(a.memos))
	for name, m := range a.memos {
		if records := m.memo.Records(); len(records) > 0 {
			out = append(out, savedMemo{Name: name, UID: m.uid, Identity: m.identity, Records: records})
		}
	}
	return out
}

// restore adds the memos of saved that a reconcile has not made yet.
// What it adds proves nothing by itself: Apply still compares every entry
// with the object in the cluster.
func (a *Memos) restore(saved []savedMemo) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.memos == nil {
		a.memos = map[types.NamespacedName]applyMemo{}
	}
	for _, s := range saved {
		if _, ok := a.memos[s.Name]; ok {
			continue
		}
		a.memos[s.Name] = applyMemo{uid: s.UID, identity: s.Identity, memo: ssa.RestoreMemo(s.Records)}
	}
}

// version grows whenever a memo changes: a keeper saves when it moved.
func (a *Memos) version() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	v := a.changes
	for _, m := range a.memos {
		v += m.memo.Version()
	}
	return v
}
