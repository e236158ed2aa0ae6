package controlplane

import (
	"bufio"
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestPodLogsServedByTheNode: a Pod on the kwok node has logs, read and
// followed through the API server's pods/log as kubectl logs reads them
// (the API server verifies the node's certificate with the control
// plane's CA).
func TestPodLogsServedByTheNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	cs, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:   NodeName,
			Containers: []corev1.Container{{Name: "app", Image: "app:1"}},
		},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cp.AppendPodLog("first line"); err != nil {
		t.Fatal(err)
	}
	var got string
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := cs.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{Container: "app"}).DoRaw(ctx)
		if err == nil {
			got = string(b)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reading the log: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got != "first line\n" {
		t.Fatalf("log = %q, want the line written", got)
	}

	tail := int64(0)
	go func() {
		time.Sleep(time.Second)
		_ = cp.AppendPodLog("second line")
	}()
	stream, err := cs.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{Container: "app", Follow: true, TailLines: &tail}).Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	lines := bufio.NewScanner(stream)
	if !lines.Scan() || lines.Text() != "second line" {
		t.Fatalf("follow went on with %q (%v), want the appended line", lines.Text(), lines.Err())
	}
}
