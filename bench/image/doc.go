// Package image benchmarks the image-reflector: an ImageRepository of
// 10,000 tags scanned by weir-controller (internal/app.Run, the
// image-reflector alone) from the in-process registry on 127.0.0.1, with
// the scan time, the memory the process allocated for it and the size of
// the stored tag list. Run it with
//
//	go test ./bench/image -run '^$' -bench . -benchtime 3x
package image
