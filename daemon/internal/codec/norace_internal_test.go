//go:build !race

package codec

// raceDetector reports whether the tests run under the race detector.
const raceDetector = false
