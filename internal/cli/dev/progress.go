package dev

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// pollInterval is how often the progress loop reads the sync's objects.
const pollInterval = 250 * time.Millisecond

// quietLimit is the longest the progress loop stays silent while something
// is still converging: past it, it says what it is waiting for.
const quietLimit = 15 * time.Second

// lockedWriter serializes the lines of the progress loop and of the push
// hook, which runs on the Git server's goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// progress prints one line each time the GitRepository or a Kustomization
// changes state, and tells when the whole sync has converged.
type progress struct {
	c     client.Client
	out   io.Writer
	lines map[string]string // object → last state printed
	quiet time.Time         // when the last line was printed
}

func newProgress(c client.Client, out io.Writer) *progress {
	return &progress{c: c, out: out, lines: map[string]string{}, quiet: time.Now()}
}

// snapshot is what one poll read.
type snapshot struct {
	source         *sourcev1.GitRepository
	kustomizations []kustomizev1.Kustomization
	// artifacts are the ExternalArtifacts, by namespace/name.
	artifacts map[client.ObjectKey]*sourcev1.ExternalArtifact
	// objects holds, for each Kustomization Ready at its generation (by
	// displayName), the kstatus state of every object of its inventory.
	objects map[string][]objectState
}

// poll reads the sync's objects and prints what changed since the last poll.
func (p *progress) poll(ctx context.Context) (*snapshot, error) {
	s := &snapshot{source: &sourcev1.GitRepository{}}
	if err := p.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: syncName}, s.source); err != nil {
		return nil, err
	}
	var list kustomizev1.KustomizationList
	if err := p.c.List(ctx, &list); err != nil {
		return nil, err
	}
	s.kustomizations = dependencyOrder(list.Items)
	p.report("GitRepository/"+syncName, s.source, s.source.Generation)
	var generators sourceextensionsv1beta1.ArtifactGeneratorList
	if err := p.c.List(ctx, &generators); err != nil {
		return nil, err
	}
	for i := range generators.Items {
		g := &generators.Items[i]
		p.report(sourceextensionsv1beta1.ArtifactGeneratorKind+"/"+objectName(g), g, g.Generation)
	}
	var artifacts sourcev1.ExternalArtifactList
	if err := p.c.List(ctx, &artifacts); err != nil {
		return nil, err
	}
	s.artifacts = map[client.ObjectKey]*sourcev1.ExternalArtifact{}
	for i := range artifacts.Items {
		s.artifacts[client.ObjectKeyFromObject(&artifacts.Items[i])] = &artifacts.Items[i]
	}
	s.objects = map[string][]objectState{}
	for i := range s.kustomizations {
		k := &s.kustomizations[i]
		p.report(displayName(k), k, k.Generation)
		if !readyAt(k) {
			continue
		}
		objs, err := objectStates(ctx, p.c, k)
		if err != nil {
			return nil, err
		}
		s.objects[displayName(k)] = objs
		p.reportObjects(displayName(k), objs)
	}
	return s, nil
}

// dependencyOrder sorts Kustomizations for printing: each after those it
// dependsOn, else by creation and name. One poll can find a dependency and
// its dependent both changed; printed in this order, the lines never show
// a dependent applied before what it waits for. A cycle is printed in
// creation order.
func dependencyOrder(ks []kustomizev1.Kustomization) []kustomizev1.Kustomization {
	sort.SliceStable(ks, func(i, j int) bool {
		return ks[i].CreationTimestamp.Before(&ks[j].CreationTimestamp) ||
			ks[i].CreationTimestamp.Equal(&ks[j].CreationTimestamp) && ks[i].Name < ks[j].Name
	})
	listed := map[client.ObjectKey]bool{}
	for i := range ks {
		listed[client.ObjectKeyFromObject(&ks[i])] = true
	}
	done := map[client.ObjectKey]bool{}
	out := make([]kustomizev1.Kustomization, 0, len(ks))
	for len(out) < len(ks) {
		progressed := false
		for i := range ks {
			key := client.ObjectKeyFromObject(&ks[i])
			if done[key] || !dependenciesDone(&ks[i], listed, done) {
				continue
			}
			done[key], progressed = true, true
			out = append(out, ks[i])
		}
		if !progressed { // a cycle: the rest in creation order
			for i := range ks {
				if !done[client.ObjectKeyFromObject(&ks[i])] {
					out = append(out, ks[i])
				}
			}
			break
		}
	}
	return out
}

// dependenciesDone reports whether every listed dependency of k is done.
func dependenciesDone(k *kustomizev1.Kustomization, listed, done map[client.ObjectKey]bool) bool {
	for _, ref := range k.Spec.DependsOn {
		ns := ref.Namespace
		if ns == "" {
			ns = k.Namespace
		}
		dep := client.ObjectKey{Namespace: ns, Name: ref.Name}
		if listed[dep] && !done[dep] {
			return false
		}
	}
	return true
}

// reportObjects prints each inventory object of the Kustomization name
// that is not current, once per message, and says when such an object
// has become current. Objects that were current all along are not
// printed: the Kustomization's line covers them.
func (p *progress) reportObjects(name string, objs []objectState) {
	for _, o := range objs {
		key := name + " " + o.name
		last, printed := p.lines[key]
		switch {
		case !o.current && last != o.message:
			p.lines[key] = o.message
			p.say("◎ %s: %s: %s", name, o.name, o.message)
		case o.current && printed && last != "":
			p.lines[key] = ""
			p.say("✔ %s: %s: %s", name, o.name, o.message)
		}
	}
}

// readyAt reports whether k is Ready at its generation.
func readyAt(k *kustomizev1.Kustomization) bool {
	ready := conditions.Get(k, meta.ReadyCondition)
	return ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == k.Generation
}

// report prints obj's state if it differs from the last one printed.
func (p *progress) report(name string, obj conditions.Object, generation int64) {
	symbol, text := state(obj, generation)
	if p.lines[name] == symbol+text {
		return
	}
	p.lines[name] = symbol + text
	p.quiet = time.Now()
	fmt.Fprintf(p.out, "%s %s: %s\n", symbol, name, text)
}

// say prints a line that is not about one object's state (a push, an
// error); it counts as progress for waitingNote.
func (p *progress) say(format string, args ...any) {
	p.quiet = time.Now()
	fmt.Fprintf(p.out, format+"\n", args...)
}

// waitingNote prints, after quietLimit without a line, what is still not
// converged, so that no minute passes in silence.
func (p *progress) waitingNote(waiting []string, since time.Time) {
	if len(waiting) == 0 || time.Since(p.quiet) < quietLimit {
		return
	}
	p.quiet = time.Now()
	fmt.Fprintf(p.out, "◎ still waiting for %s (%s)\n", strings.Join(waiting, ", "), roundDuration(time.Since(since)))
}

// dependencyMessage matches the reconciler's DependencyNotReady messages:
// "dependency 'ns/name' is not ready", "... revision is not up to date".
var dependencyMessage = regexp.MustCompile(`^dependency '([^']+)' (?:is )?(.*)$`)

// sourceWaitMessage matches the ArtifactFailed messages that mean the
// source has no artifact to give yet: "Source artifact not found, retrying
// in 30s" (not fetched yet), "Source is not ready, artifact not found, ..."
// (the artifact is being replaced) and "Source 'GitRepository/ns/name' not
// found" (the source object is not created yet). Other ArtifactFailed
// messages, such as a path missing from the artifact, are failures.
var sourceWaitMessage = regexp.MustCompile(`^(Source artifact not found|Source is not ready, artifact not found|Source '[^']+' not found)`)

// state is an object's Ready condition as one progress line: a symbol
// (◎ waiting or in progress, ✔ ready, ✗ failed), the reason and message.
func state(obj conditions.Object, generation int64) (symbol, text string) {
	ready := conditions.Get(obj, meta.ReadyCondition)
	switch {
	case ready == nil:
		return "◎", "waiting to be reconciled"
	case ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == generation:
		return "✔", ready.Message
	case ready.Reason == meta.DependencyNotReadyReason:
		if m := dependencyMessage.FindStringSubmatch(ready.Message); m != nil {
			return "◎", fmt.Sprintf("waiting for dependency '%s' (%s)", m[1], m[2])
		}
		return "◎", "waiting: " + ready.Message
	case ready.Reason == meta.ArtifactFailedReason && sourceWaitMessage.MatchString(ready.Message):
		// Flux's condition stays on the object; it is a wait for the
		// source's first (or next) artifact, not a failure.
		return "◎", "waiting for the source: " + ready.Message
	case ready.Status == metav1.ConditionFalse:
		return "✗", ready.Reason + ": " + ready.Message
	default:
		return "◎", ready.Reason + ": " + ready.Message
	}
}

// converged reports whether revision is in the cluster: the source has
// fetched it, every Kustomization built from it is Ready at its generation
// having applied it, and every object of their inventories is Current by
// kstatus (its controller has observed its generation; a Deployment has
// rolled out). A Kustomization built from an ExternalArtifact generated
// from the source counts when the artifact was generated from revision
// (its origin revision) and the Kustomization applied the artifact's
// revision, which a commit that leaves the copied files alone does not
// change. Otherwise it returns what is not there yet.
func (s *snapshot) converged(revision string) (bool, []string) {
	var waiting []string
	if a := s.source.Status.Artifact; a == nil || a.Revision != revision || !conditions.IsReady(s.source) {
		waiting = append(waiting, "GitRepository/"+syncName)
	}
	sync := false
	for i := range s.kustomizations {
		k := &s.kustomizations[i]
		if k.Namespace == namespace && k.Name == syncName {
			sync = true
		}
		want, follows := s.wantRevision(k, revision)
		if !follows {
			continue
		}
		if !readyAt(k) || want == "" || k.Status.LastAppliedRevision != want {
			waiting = append(waiting, displayName(k))
			continue
		}
		for _, o := range s.objects[displayName(k)] {
			if !o.current {
				waiting = append(waiting, fmt.Sprintf("%s (%s: %s)", displayName(k), o.name, o.message))
				break
			}
		}
	}
	if !sync {
		waiting = append(waiting, syncName)
	}
	return len(waiting) == 0, waiting
}

// wantRevision is the revision k must have applied for revision of the
// sync's GitRepository to be in the cluster, and whether k follows that
// repository at all: revision itself for a Kustomization of the
// repository, the artifact's revision for one of an ExternalArtifact
// whose origin revision is revision, "" while that artifact is not
// generated from revision yet.
func (s *snapshot) wantRevision(k *kustomizev1.Kustomization, revision string) (string, bool) {
	ref := k.Spec.SourceRef
	ns := ref.Namespace
	if ns == "" {
		ns = k.Namespace
	}
	switch ref.Kind {
	case sourcev1.GitRepositoryKind:
		return revision, ref.Name == syncName && ns == namespace
	case sourcev1.ExternalArtifactKind:
		ea := s.artifacts[client.ObjectKey{Namespace: ns, Name: ref.Name}]
		if ea == nil || ea.Status.Artifact == nil {
			return "", true
		}
		a := ea.Status.Artifact
		// Without originRevision in its spec, an artifact does not say
		// which commit it was copied from: its own revision is all there is.
		if origin, ok := a.Metadata[sourceextensionsv1beta1.OriginRevisionAnnotation]; ok && origin != revision {
			return "", true
		}
		return a.Revision, true
	default:
		return "", false
	}
}

// objectName is an object's name, with its namespace unless it is
// flux-system.
func objectName(o client.Object) string {
	if o.GetNamespace() == namespace {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// displayName is a Kustomization's name, with its namespace unless it is
// flux-system.
func displayName(k *kustomizev1.Kustomization) string { return objectName(k) }

// waitConverged polls until every Kustomization of the sync is Ready at
// revision, printing each change, or until ctx ends.
func (p *progress) waitConverged(ctx context.Context, revision string, since time.Time) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var waiting []string
	for {
		s, err := p.poll(ctx)
		if err == nil {
			var ok bool
			if ok, waiting = s.converged(revision); ok {
				return nil
			}
			p.waitingNote(waiting, since)
		}
		select {
		case <-ctx.Done():
			if len(waiting) > 0 {
				return fmt.Errorf("%w while waiting for %s", context.Cause(ctx), strings.Join(waiting, ", "))
			}
			return context.Cause(ctx)
		case <-tick.C:
		}
	}
}

func roundDuration(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
