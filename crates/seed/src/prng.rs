//! mulberry32: the small 32-bit generator the demo data set is drawn from.

/// A mulberry32 stream. `next_f64` gives the same sequence as the common JavaScript form
/// (`t = a += 0x6D2B79F5; t = Math.imul(t ^ t >>> 15, t | 1); …`).
#[derive(Debug, Clone)]
pub struct Mulberry32 {
    state: u32,
}

impl Mulberry32 {
    pub const fn new(seed: u32) -> Self {
        Self { state: seed }
    }

    pub fn next_u32(&mut self) -> u32 {
        self.state = self.state.wrapping_add(0x6D2B_79F5);
        let mut t = self.state;
        t = (t ^ (t >> 15)).wrapping_mul(t | 1);
        t ^= t.wrapping_add((t ^ (t >> 7)).wrapping_mul(t | 0x3D));
        t ^ (t >> 14)
    }

    /// A draw in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        f64::from(self.next_u32()) / 4_294_967_296.0
    }

    /// `Math.floor(r * n)`, computed in floating point exactly as the JavaScript is, so that a
    /// product that rounds across an integer boundary rounds the same way here.
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
    pub fn next_below(&mut self, n: i64) -> i64 {
        (self.next_f64() * n as f64).floor() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_sequence() {
        // mulberry32(42) as JavaScript prints it: 0.6011037519201636, 0.44829055899754167, …
        let mut rng = Mulberry32::new(42);
        assert_eq!(rng.next_f64().to_bits(), 0.601_103_751_920_163_6_f64.to_bits());
        assert_eq!(rng.next_f64().to_bits(), 0.448_290_558_997_541_67_f64.to_bits());
    }
}
