package augment

import "fmt"

// OneHot writes label-smoothed one-hot targets (B, classes) for labels (B,)
// into dst[:B*classes], as timm does: every entry is smoothing/classes and the
// label's entry is 1 - smoothing + smoothing/classes. smoothing 0 gives plain
// one-hot rows. It fails when a label is outside [0, classes) or dst is too
// short.
func OneHot(labels []int, classes int, smoothing float64, dst []float32) error {
	return mixTargets(labels, classes, smoothing, 1, dst)
}

// mixTargets writes lam*onehot(labels[i]) + (1-lam)*onehot(labels[B-1-i])
// with smoothing into dst (timm's mixup_target).
func mixTargets(labels []int, classes int, smoothing, lam float64, dst []float32) error {
	if classes <= 0 {
		return fmt.Errorf("augment: targets: classes = %d, want > 0", classes)
	}
	if smoothing < 0 || smoothing > 1 {
		return fmt.Errorf("augment: targets: label smoothing %g outside [0, 1]", smoothing)
	}
	b := len(labels)
	if len(dst) < b*classes {
		return fmt.Errorf("augment: targets: dst holds %d values, want B*classes = %d*%d", len(dst), b, classes)
	}
	for i, l := range labels {
		if l < 0 || l >= classes {
			return fmt.Errorf("augment: targets: label %d of row %d outside [0, %d)", l, i, classes)
		}
	}
	off := smoothing / float64(classes)
	on := 1 - smoothing + off
	for i, l := range labels {
		row := dst[i*classes : (i+1)*classes]
		fillSlice(row, float32(off))
		row[l] += float32(lam * (on - off))
		row[labels[b-1-i]] += float32((1 - lam) * (on - off))
	}
	return nil
}
