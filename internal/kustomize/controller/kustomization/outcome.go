package kustomization

import (
	"time"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// outcome is the record of one run, as the skeleton passes it from Begin
// to Status and Events: each phase leaves its result in a field of its
// own, and nothing else writes there. The ending (status.go, events.go)
// reads them all.
type outcome struct {
	begin    beginning
	source   sourceResult
	build    buildResult
	apply    applyResult
	health   healthResult
	progress progress
	end      ending
}

// beginning is what the run started from (Reconciler.begin): when, the
// status as it was (the quiet ending compares against it) and whether
// the objects were Healthy.
type beginning struct {
	at      time.Time
	status  *kustomizev1.KustomizationStatus
	healthy bool
}

// sourceResult is the source phase's: the revision of the artifact, and
// the one an OCI artifact was built from.
type sourceResult struct {
	revision       string
	originRevision string
}

// buildResult is the build phase's (fetchAndBuild, or a resumed health
// check's carried copy): attempted is true once the artifact was fetched
// or found in the build cache, so the run counts as an attempt of the
// revision; checksum is the build's, for status.history.
type buildResult struct {
	attempted bool
	checksum  string
}

// applyResult is the apply phase's: the change sets of the apply and the
// prune, and the new inventory once the apply succeeded.
type applyResult struct {
	applied   *ssa.ChangeSet
	pruned    *ssa.ChangeSet
	inventory *kustomizev1.ResourceInventory
}

// healthResult is the health phase's: passed (and how long it took).
// A check resumed from a parked wait ends an apply of an earlier run:
// since is when that apply ended and applyChanged whether it changed
// anything.
type healthResult struct {
	passed       bool
	took         time.Duration
	resumed      bool
	since        time.Time
	applyChanged bool
}

// progress is what the run reported while it ran (quiet.go, hold.go):
// whether it began steady (quiet) and when, whether it has patched the
// status since (wrote), the phase it holds back (held), the "Detecting
// drift" message the first stage's intent reports while it is due
// (detecting), and the inventory the apply's stages recorded ahead of
// their writes: written is what they wrote or were about to write
// (recordWrites), intended is true once recordIntent added objects that
// may not be among them (forgetIntent).
type progress struct {
	quiet     bool
	begun     time.Time
	wrote     bool
	held      *held
	detecting string
	written   []ssa.ChangeSetEntry
	intended  bool
}

// ending is how the run ends, decided once by Reconciler.status and
// followed by Reconciler.events: quiet (nothing changed, the status stays
// as it was found) or not, and how long the work it ends took.
type ending struct {
	quiet bool
	took  time.Duration
}

// took is how long the work this run ends took, up to now: from the
// resumed apply when there was one, else from the run's start.
func (o *outcome) took(now time.Time) time.Duration {
	if o.health.resumed {
		return now.Sub(o.health.since)
	}
	return now.Sub(o.begin.at)
}

// changed reports whether the apply that this run ends changed objects.
func (o *outcome) changed() bool {
	return o.health.applyChanged || o.apply.applied != nil && o.apply.applied.Changes() != ""
}
