package meta

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxHistorySize is how many snapshots a History keeps.
const MaxHistorySize = 5

// History is a short record of past reconciliations, newest first; two runs
// that produced the same digest with the same status share one snapshot.
type History []Snapshot

// Snapshot describes one distinct outcome of reconciliation.
type Snapshot struct {
	// Digest is the checksum of what was reconciled (e.g. built manifests).
	// +required
	Digest string `json:"digest"`

	// FirstReconciled is when this outcome was first seen.
	// +required
	FirstReconciled metav1.Time `json:"firstReconciled"`

	// LastReconciled is when this outcome was last seen.
	// +required
	LastReconciled metav1.Time `json:"lastReconciled"`

	// LastReconciledDuration is how long the last reconciliation took.
	// +required
	LastReconciledDuration metav1.Duration `json:"lastReconciledDuration"`

	// LastReconciledStatus is the reason of the Ready condition at the end.
	// +required
	LastReconciledStatus string `json:"lastReconciledStatus"`

	// TotalReconciliations counts the reconciliations with this outcome.
	// +required
	TotalReconciliations int64 `json:"totalReconciliations"`

	// Metadata holds facts such as the revision reconciled.
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Latest returns the newest snapshot, or nil.
func (h History) Latest() *Snapshot {
	if len(h) == 0 {
		return nil
	}
	return &h[0]
}

// Upsert records one reconciliation outcome. A snapshot with the same digest
// and status is updated (last time, duration, count, metadata) and moved to
// the front; otherwise a new snapshot is prepended. At most MaxHistorySize
// snapshots are kept, newest first.
func (h *History) Upsert(digest string, at time.Time, took time.Duration, status string, metadata map[string]string) {
	now := metav1.NewTime(at)
	for i, s := range *h {
		if s.Digest != digest || s.LastReconciledStatus != status {
			continue
		}
		s.LastReconciled = now
		s.LastReconciledDuration = metav1.Duration{Duration: took}
		s.TotalReconciliations++
		s.Metadata = metadata
		rest := append((*h)[:i:i], (*h)[i+1:]...)
		*h = append(History{s}, rest...)
		return
	}
	*h = append(History{{
		Digest:                 digest,
		FirstReconciled:        now,
		LastReconciled:         now,
		LastReconciledDuration: metav1.Duration{Duration: took},
		LastReconciledStatus:   status,
		TotalReconciliations:   1,
		Metadata:               metadata,
	}}, *h...)
	if len(*h) > MaxHistorySize {
		*h = (*h)[:MaxHistorySize]
	}
}
