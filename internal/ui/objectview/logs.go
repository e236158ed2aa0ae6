package objectview

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TailLines is how many lines of each container's log the page shows
// first.
const TailLines = 50

// ContainerLog is the last lines of one container's log, or why the
// caller cannot have them.
type ContainerLog struct {
	Container string   `json:"container"`
	Lines     []string `json:"lines"`
	// Error is a sentence: the caller may not read pods/log, or the node
	// could not serve the log (kwok's nodes have no kubelet to).
	Error string `json:"error,omitempty"`
}

// PodLogs reads, as the caller, the last tail lines of each container of
// the Pod ns/name (init containers first). Reading the Pod itself must
// succeed; a log that cannot be read is a sentence in its entry.
func PodLogs(ctx context.Context, cfg *rest.Config, ns, name string, tail int64) ([]ContainerLog, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building client: %w", err)
	}
	pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading pod %s/%s: %w", ns, name, err)
	}
	var out []ContainerLog
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		l := ContainerLog{Container: c.Name, Lines: []string{}}
		raw, err := readLog(ctx, cs, ns, name, c.Name, tail)
		if err != nil {
			l.Error = LogError(ns, name, c.Name, err)
		} else if text := strings.TrimRight(string(raw), "\n"); text != "" {
			l.Lines = strings.Split(text, "\n")
		}
		out = append(out, l)
	}
	return out, nil
}

// readLog reads the last tail lines of a container's log. Stream, not
// DoRaw: only Stream decodes the API server's refusal into its status
// (DoRaw's error says "unknown").
func readLog(ctx context.Context, cs kubernetes.Interface, ns, pod, container string, tail int64) ([]byte, error) {
	rc, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: &tail}).Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("reading the log: %w", err)
	}
	return data, nil
}

// LogError is the sentence the page shows for a log it cannot read.
func LogError(ns, pod, container string, err error) string {
	if apierrors.IsForbidden(err) {
		return fmt.Sprintf("You may not read the logs of pod %s/%s (pods/log): %v", ns, pod, err)
	}
	return fmt.Sprintf("The log of container %s could not be read from its node: %v", container, err)
}

// FollowLog streams, as the caller, container's log of the Pod ns/name
// from its last tail lines on, calling line for each line until ctx ends
// or the log does; an error is LogError's sentence.
func FollowLog(ctx context.Context, cfg *rest.Config, ns, name, container string, tail int64, line func(string)) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building client: %w", err)
	}
	rc, err := cs.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{Container: container, TailLines: &tail, Follow: true}).Stream(ctx)
	if err != nil {
		return errors.New(LogError(ns, name, container, err))
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line(sc.Text())
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading the log of container %s: %w", container, err)
	}
	return nil
}
