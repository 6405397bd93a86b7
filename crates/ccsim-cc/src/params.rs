//! Algorithm parameters: a declared spec per parameter (name, unit, default, doc, range) and a
//! checked reader that turns a user's key/value map into a typed parameter struct.
//!
//! Modelled on Linux `module_param` plus the range checks of `tcp_cdg.c`, and on ns-3 attributes with
//! checkers: every parameter is declared once, validated once at construction, and listed by
//! `ccsim list`.

use std::collections::BTreeMap;

use crate::CcError;

/// A value given by the user for a parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Number(f64),
    Bool(bool),
    Text(String),
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Number(x) => write!(f, "{x}"),
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// User-supplied parameters of one flow's algorithm, by name.
pub type ParamMap = BTreeMap<String, ParamValue>;

/// The kind and allowed values of a parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    /// A real number in [min, max] (inclusive unless the `*_exclusive` flag says otherwise).
    Number { min: f64, max: f64, min_exclusive: bool },
    /// An integer in [min, max].
    Integer { min: i64, max: i64 },
    Bool,
    /// One of a fixed set of words, the default first (as `ccsim list` shows them).
    Choice(Vec<&'static str>),
}

/// A parameter whose value is one of a fixed set of words, read as a Rust enum: the words are declared
/// once (by [`param_choice!`](crate::param_choice)), the spec lists them, [`ParamReader::new`] refuses
/// any other word naming the allowed ones, and algorithms match on the enum, never on strings.
pub trait ParamChoice: Copy + Sized + 'static {
    /// The allowed words, in the order `ccsim list` shows them.
    const CHOICES: &'static [&'static str];
    /// The enum value of `CHOICES[i]`.
    fn from_index(i: usize) -> Self;
    /// The word of this value.
    fn word(self) -> &'static str;
    fn from_word(word: &str) -> Option<Self> {
        Self::CHOICES.iter().position(|c| *c == word).map(Self::from_index)
    }
}

/// Declares an enum of choice-parameter values and its [`ParamChoice`] words:
/// `param_choice! { pub enum HalveFrom { Flight = "flight", Cwnd = "cwnd" } }`.
#[macro_export]
macro_rules! param_choice {
    ($(#[$m:meta])* $vis:vis enum $name:ident { $($(#[$vm:meta])* $variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name { $($(#[$vm])* $variant),+ }
        impl $crate::params::ParamChoice for $name {
            const CHOICES: &'static [&'static str] = &[$($word),+];
            fn from_index(i: usize) -> Self {
                const ALL: &[$name] = &[$($name::$variant),+];
                ALL[i]
            }
            fn word(self) -> &'static str {
                match self { $($name::$variant => $word),+ }
            }
        }
    };
}

/// Declaration of one parameter, shown by `ccsim list` and used to validate input.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSpec {
    pub name: &'static str,
    /// Unit of the value as the user writes it (`"s"`, `"ms"`, `"pkts"`, `"probability"`, `""`).
    pub unit: &'static str,
    pub default: ParamValue,
    pub kind: ParamKind,
    /// One line: what it is and where the default comes from.
    pub doc: &'static str,
}

impl ParamSpec {
    pub const fn number(name: &'static str, unit: &'static str, default: f64, min: f64, max: f64, doc: &'static str) -> Self {
        ParamSpec { name, unit, default: ParamValue::Number(default), kind: ParamKind::Number { min, max, min_exclusive: false }, doc }
    }
    /// A number that must be strictly greater than `min`.
    pub const fn positive(name: &'static str, unit: &'static str, default: f64, max: f64, doc: &'static str) -> Self {
        ParamSpec { name, unit, default: ParamValue::Number(default), kind: ParamKind::Number { min: 0.0, max, min_exclusive: true }, doc }
    }
    pub const fn integer(name: &'static str, unit: &'static str, default: i64, min: i64, max: i64, doc: &'static str) -> Self {
        ParamSpec { name, unit, default: ParamValue::Number(default as f64), kind: ParamKind::Integer { min, max }, doc }
    }
    pub const fn boolean(name: &'static str, default: bool, doc: &'static str) -> Self {
        ParamSpec { name, unit: "", default: ParamValue::Bool(default), kind: ParamKind::Bool, doc }
    }
    /// A choice parameter whose allowed words are those of the enum `T` (see [`ParamChoice`]), listed
    /// with the default first and the others in declaration order.
    pub fn choice<T: ParamChoice>(name: &'static str, default: T, doc: &'static str) -> Self {
        let first = default.word();
        let words = std::iter::once(first).chain(T::CHOICES.iter().copied().filter(|w| *w != first)).collect();
        ParamSpec { name, unit: "", default: ParamValue::Text(first.to_string()), kind: ParamKind::Choice(words), doc }
    }

    /// Human-readable allowed range, for `ccsim list` and error messages.
    pub fn range_text(&self) -> String {
        match &self.kind {
            ParamKind::Number { min, max, min_exclusive } => {
                let lo = if *min_exclusive { "(" } else { "[" };
                if max.is_infinite() {
                    format!("{lo}{min}, inf)")
                } else {
                    format!("{lo}{min}, {max}]")
                }
            }
            ParamKind::Integer { min, max } => format!("integer in [{min}, {max}]"),
            ParamKind::Bool => "true or false".to_string(),
            ParamKind::Choice(c) => format!("one of {}", c.join(", ")),
        }
    }

    fn check(&self, algorithm: &str, value: &ParamValue) -> Result<(), CcError> {
        let bad = |reason: String| CcError::InvalidParameter {
            algorithm: algorithm.to_string(),
            name: self.name.to_string(),
            reason,
        };
        match (&self.kind, value) {
            (ParamKind::Number { min, max, min_exclusive }, ParamValue::Number(x)) => {
                let below = if *min_exclusive { *x <= *min } else { *x < *min };
                if !x.is_finite() || below || *x > *max {
                    return Err(bad(format!("{x} is out of range {}", self.range_text())));
                }
            }
            (ParamKind::Integer { min, max }, ParamValue::Number(x)) => {
                if x.fract() != 0.0 || *x < *min as f64 || *x > *max as f64 {
                    return Err(bad(format!("{x} is not an {}", self.range_text())));
                }
            }
            (ParamKind::Bool, ParamValue::Bool(_)) => {}
            (ParamKind::Choice(c), ParamValue::Text(s)) => {
                if !c.contains(&s.as_str()) {
                    return Err(bad(format!("{s:?} is not {}", self.range_text())));
                }
            }
            (_, v) => return Err(bad(format!("{v} has the wrong type: expected {}", self.range_text()))),
        }
        Ok(())
    }
}

/// Reads validated parameters for one algorithm: unknown names and bad values are errors.
pub struct ParamReader<'a> {
    algorithm: &'static str,
    specs: &'a [ParamSpec],
    given: &'a ParamMap,
}

impl<'a> ParamReader<'a> {
    /// Checks every given name against the specs and every value against its range.
    pub fn new(algorithm: &'static str, specs: &'a [ParamSpec], given: &'a ParamMap) -> Result<Self, CcError> {
        for (name, value) in given {
            let spec = specs.iter().find(|s| s.name == name).ok_or_else(|| CcError::UnknownParameter {
                algorithm: algorithm.to_string(),
                name: name.clone(),
                known: specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
            })?;
            spec.check(algorithm, value)?;
        }
        Ok(ParamReader { algorithm, specs, given })
    }

    fn value(&self, name: &str) -> &ParamValue {
        if let Some(v) = self.given.get(name) {
            return v;
        }
        match self.specs.iter().find(|s| s.name == name) {
            Some(spec) => &spec.default,
            None => panic!("{}: parameter {name} is read but not declared", self.algorithm),
        }
    }

    pub fn f64(&self, name: &str) -> f64 {
        match self.value(name) {
            ParamValue::Number(x) => *x,
            other => panic!("{}: parameter {name} is not a number: {other}", self.algorithm),
        }
    }

    pub fn bool(&self, name: &str) -> bool {
        match self.value(name) {
            ParamValue::Bool(b) => *b,
            other => panic!("{}: parameter {name} is not a bool: {other}", self.algorithm),
        }
    }

    /// A choice parameter as its enum. The word was checked against the spec in [`ParamReader::new`];
    /// a spec that does not list exactly `T::CHOICES` is a programming error.
    pub fn choice<T: ParamChoice>(&self, name: &str) -> T {
        let spec = self.specs.iter().find(|s| s.name == name);
        assert!(
            matches!(spec, Some(ParamSpec { kind: ParamKind::Choice(c), .. })
                if c.len() == T::CHOICES.len() && T::CHOICES.iter().all(|w| c.contains(w))),
            "{}: parameter {name} is not declared as a choice of {:?}",
            self.algorithm,
            T::CHOICES
        );
        match self.value(name) {
            ParamValue::Text(s) => T::from_word(s).expect("checked by ParamReader::new"),
            other => panic!("{}: parameter {name} is not a choice: {other}", self.algorithm),
        }
    }

    /// A duration given in milliseconds.
    pub fn millis(&self, name: &str) -> std::time::Duration {
        std::time::Duration::from_nanos((self.f64(name) * 1e6).round() as u64)
    }

    /// A cross-parameter check that failed: reported against parameter `name`.
    pub fn invalid(&self, name: &str, reason: impl Into<String>) -> CcError {
        CcError::InvalidParameter { algorithm: self.algorithm.to_string(), name: name.to_string(), reason: reason.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec::number("p_max", "probability", 0.02, 0.0, 1.0, "max backoff probability"),
        ParamSpec::integer("window", "pkts", 4, 1, 100, "a window"),
    ];

    #[test]
    fn defaults_apply_and_values_are_read() {
        let mut given = ParamMap::new();
        given.insert("window".into(), ParamValue::Number(7.0));
        let r = ParamReader::new("x", SPECS, &given).unwrap();
        assert_eq!(r.f64("p_max"), 0.02);
        assert_eq!(r.f64("window"), 7.0);
    }

    crate::param_choice! {
        enum Colour { Red = "red", DeepBlue = "deep_blue" }
    }

    #[test]
    fn choices_are_read_as_enums_and_misspellings_name_the_allowed_words() {
        let specs = [ParamSpec::choice("colour", Colour::DeepBlue, "a colour")];
        assert_eq!(specs[0].kind, ParamKind::Choice(vec!["deep_blue", "red"]), "default listed first");
        assert_eq!(specs[0].default, ParamValue::Text("deep_blue".into()));
        let given = ParamMap::new();
        assert_eq!(ParamReader::new("x", &specs, &given).unwrap().choice::<Colour>("colour"), Colour::DeepBlue);
        let mut given = ParamMap::new();
        given.insert("colour".into(), ParamValue::Text("red".into()));
        assert_eq!(ParamReader::new("x", &specs, &given).unwrap().choice::<Colour>("colour"), Colour::Red);
        given.insert("colour".into(), ParamValue::Text("deepblue".into()));
        let e = ParamReader::new("x", &specs, &given).err().unwrap().to_string();
        assert_eq!(e, "x.colour: \"deepblue\" is not one of deep_blue, red");
    }

    #[test]
    #[should_panic(expected = "not declared as a choice")]
    fn reading_a_choice_with_the_wrong_enum_is_a_programming_error() {
        crate::param_choice! { enum Other { A = "a" } }
        let specs = [ParamSpec::choice("colour", Colour::Red, "a colour")];
        let given = ParamMap::new();
        let _ = ParamReader::new("x", &specs, &given).unwrap().choice::<Other>("colour");
    }

    #[test]
    fn unknown_and_out_of_range_parameters_are_errors() {
        let mut given = ParamMap::new();
        given.insert("pmax".into(), ParamValue::Number(0.5));
        let e = ParamReader::new("x", SPECS, &given).err().unwrap().to_string();
        assert!(e.contains("pmax") && e.contains("unknown"), "{e}");
        let mut given = ParamMap::new();
        given.insert("p_max".into(), ParamValue::Number(1.5));
        let e = ParamReader::new("x", SPECS, &given).err().unwrap().to_string();
        assert!(e.contains("p_max") && e.contains("out of range"), "{e}");
        let mut given = ParamMap::new();
        given.insert("window".into(), ParamValue::Number(2.5));
        assert!(ParamReader::new("x", SPECS, &given).is_err());
        let mut given = ParamMap::new();
        given.insert("window".into(), ParamValue::Bool(true));
        assert!(ParamReader::new("x", SPECS, &given).is_err());
    }
}
