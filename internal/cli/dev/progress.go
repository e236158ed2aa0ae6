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
	s.kustomizations = list.Items
	sort.Slice(s.kustomizations, func(i, j int) bool {
		return s.kustomizations[i].CreationTimestamp.Before(&s.kustomizations[j].CreationTimestamp) ||
			s.kustomizations[i].CreationTimestamp.Equal(&s.kustomizations[j].CreationTimestamp) &&
				s.kustomizations[i].Name < s.kustomizations[j].Name
	})
	p.report("GitRepository/"+syncName, s.source, s.source.Generation)
	for i := range s.kustomizations {
		k := &s.kustomizations[i]
		p.report(displayName(k), k, k.Generation)
	}
	return s, nil
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
	case ready.Status == metav1.ConditionFalse:
		return "✗", ready.Reason + ": " + ready.Message
	default:
		return "◎", ready.Reason + ": " + ready.Message
	}
}

// converged reports whether the source has fetched revision and every
// Kustomization built from it is Ready having applied it; otherwise it
// returns the names of those not there yet.
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
		ref := k.Spec.SourceRef
		if ref.Kind != sourcev1.GitRepositoryKind || ref.Name != syncName || (ref.Namespace != "" && ref.Namespace != namespace) {
			continue
		}
		ready := conditions.Get(k, meta.ReadyCondition)
		if ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != k.Generation ||
			k.Status.LastAppliedRevision != revision {
			waiting = append(waiting, displayName(k))
		}
	}
	if !sync {
		waiting = append(waiting, syncName)
	}
	return len(waiting) == 0, waiting
}

// displayName is a Kustomization's name, with its namespace unless it is
// flux-system.
func displayName(k *kustomizev1.Kustomization) string {
	if k.Namespace == namespace {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

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
