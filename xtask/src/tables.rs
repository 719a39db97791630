//! The type tables of the typed C families (spec 3.3 and the OpenSHMEM 1.5 extensions): pure data,
//! read by the generators of this crate. Names here carry no C prefix; the generators add it.

/// One C type of a typed family: `name` is the NAME/TYPENAME in the function names
/// (`<prefix>_<name>_put`), `c` the C spelling, `rust` the Rust type of the export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Type {
    pub name: &'static str,
    pub c: &'static str,
    pub rust: &'static str,
}

const fn t(name: &'static str, c: &'static str, rust: &'static str) -> Type {
    Type { name, c, rust }
}

/// `ACLSHMEM_TYPE_FUNC`: the typed RMA and put-with-signal families.
pub const TYPES: &[Type] = &[
    t("float", "float", "f32"),
    t("double", "double", "f64"),
    t("int8", "int8_t", "i8"),
    t("int16", "int16_t", "i16"),
    t("int32", "int32_t", "i32"),
    t("int64", "int64_t", "i64"),
    t("uint8", "uint8_t", "u8"),
    t("uint16", "uint16_t", "u16"),
    t("uint32", "uint32_t", "u32"),
    t("uint64", "uint64_t", "u64"),
    t("char", "char", "c_char"),
];

/// `ACLSHMEM_P2P_SYNC_TYPE_FUNC`: the names of [`TYPES`] with a wait/test family (all but `double`).
pub const P2P_SYNC_TYPES: &[&str] = &[
    "float", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "char",
];

/// `ACLSHMEM_SIZE_FUNC`: element sizes in bits of the sized RMA and put-with-signal families.
pub const SIZES: &[usize] = &[8, 16, 32, 64, 128];

/// Which host atomics an [`AMO_TYPES`] entry has (OpenSHMEM 1.5 AMO classes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AmoClass {
    /// fetch, set, swap (and their `_nbi` forms) only
    Extended,
    /// extended + compare_swap, fetch_inc, inc, fetch_add, add (and `_nbi` forms)
    Standard,
    /// standard + and, or, xor (fetching, non-fetching and `_nbi` forms)
    Bitwise,
}

/// OpenSHMEM 1.5 AMO types of the host atomics extension.
pub const AMO_TYPES: &[(Type, AmoClass)] = &[
    (t("int", "int", "c_int"), AmoClass::Standard),
    (t("long", "long", "c_long"), AmoClass::Standard),
    (t("longlong", "long long", "c_longlong"), AmoClass::Standard),
    (t("uint", "unsigned int", "c_uint"), AmoClass::Bitwise),
    (t("ulong", "unsigned long", "c_ulong"), AmoClass::Bitwise),
    (
        t("ulonglong", "unsigned long long", "c_ulonglong"),
        AmoClass::Bitwise,
    ),
    (t("int32", "int32_t", "i32"), AmoClass::Bitwise),
    (t("int64", "int64_t", "i64"), AmoClass::Bitwise),
    (t("uint32", "uint32_t", "u32"), AmoClass::Bitwise),
    (t("uint64", "uint64_t", "u64"), AmoClass::Bitwise),
    (t("size", "size_t", "usize"), AmoClass::Standard),
    (t("ptrdiff", "ptrdiff_t", "isize"), AmoClass::Standard),
    (t("float", "float", "f32"), AmoClass::Extended),
    (t("double", "double", "f64"), AmoClass::Extended),
];

/// OpenSHMEM 1.5 standard RMA types (long double left out: no Rust equivalent): the typed
/// collectives and reductions.
pub const STD_TYPES: &[Type] = &[
    t("float", "float", "f32"),
    t("double", "double", "f64"),
    t("char", "char", "c_char"),
    t("schar", "signed char", "c_schar"),
    t("short", "short", "c_short"),
    t("int", "int", "c_int"),
    t("long", "long", "c_long"),
    t("longlong", "long long", "c_longlong"),
    t("uchar", "unsigned char", "c_uchar"),
    t("ushort", "unsigned short", "c_ushort"),
    t("uint", "unsigned int", "c_uint"),
    t("ulong", "unsigned long", "c_ulong"),
    t("ulonglong", "unsigned long long", "c_ulonglong"),
    t("int8", "int8_t", "i8"),
    t("int16", "int16_t", "i16"),
    t("int32", "int32_t", "i32"),
    t("int64", "int64_t", "i64"),
    t("uint8", "uint8_t", "u8"),
    t("uint16", "uint16_t", "u16"),
    t("uint32", "uint32_t", "u32"),
    t("uint64", "uint64_t", "u64"),
    t("size", "size_t", "usize"),
    t("ptrdiff", "ptrdiff_t", "isize"),
];

/// Names of [`STD_TYPES`] the bitwise reductions take (OpenSHMEM 1.5: the unsigned and
/// fixed-width integer types); max/min/sum/prod take every standard type.
pub const BITWISE_TYPES: &[&str] = &[
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "ulonglong",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "size",
];

/// A typed collective other than broadcast: (family, doc line; `{c}` stands for the C type).
pub const COLLECTIVES: &[(&str, &str)] = &[
    (
        "collect",
        "Concatenates every member's `nelems` `{c}` (the count may differ per member) into `dest`, in team order.",
    ),
    (
        "fcollect",
        "Concatenates every member's `nelems` `{c}` (the same count everywhere) into `dest`, in team order.",
    ),
    (
        "alltoall",
        "Exchanges blocks of `nelems` `{c}`: block j of member i's `source` goes to block i of member j's `dest`.",
    ),
];

/// A reduction operator: `op` in the name (`<prefix>_<type>_<op>_reduce`), `variant` of
/// `aclshmem_core::collectives::Op`, `what` in the doc, `bitwise` when only [`BITWISE_TYPES`] have it.
#[derive(Clone, Copy, Debug)]
pub struct Reduction {
    pub op: &'static str,
    pub variant: &'static str,
    pub what: &'static str,
    pub bitwise: bool,
}

const fn r(op: &'static str, variant: &'static str, what: &'static str, bitwise: bool) -> Reduction {
    Reduction {
        op,
        variant,
        what,
        bitwise,
    }
}

/// The reductions, in the order of the generated file.
pub const REDUCTIONS: &[Reduction] = &[
    r("and", "And", "bitwise AND", true),
    r("or", "Or", "bitwise OR", true),
    r("xor", "Xor", "bitwise XOR", true),
    r("max", "Max", "maximum", false),
    r("min", "Min", "minimum", false),
    r("sum", "Sum", "sum (integers wrap)", false),
    r("prod", "Prod", "product (integers wrap)", false),
];

/// A `shmem_*` compatibility alias family of the original headers (spec section 12) over
/// [`TYPES`]: `#define shmem_<alias> <prefix>_<target>`, where `{}` in `alias` and `target` stands
/// for the type's name.
#[derive(Clone, Copy, Debug)]
pub struct AliasFamily {
    pub alias: &'static str,
    pub target: &'static str,
}

const fn a(alias: &'static str, target: &'static str) -> AliasFamily {
    AliasFamily { alias, target }
}

/// Typed aliases of `host/data_plane/shmem_host_rma.h`, in the original's order.
pub const RMA_ALIASES: &[AliasFamily] = &[
    a("put_{}_mem", "{}_put"),
    a("put_{}_mem_nbi", "{}_put_nbi"),
    a("get_{}_mem", "{}_get"),
    a("get_{}_mem_nbi", "{}_get_nbi"),
    a("{}_p", "{}_p"),
    a("{}_g", "{}_g"),
];

/// Typed aliases of `host/data_plane/shmem_host_so.h`, in the original's order.
pub const SIGNAL_ALIASES: &[AliasFamily] = &[
    a("put_{}_mem_signal", "{}_put_signal"),
    a("put_{}_mem_signal_nbi", "{}_put_signal_nbi"),
];

/// Expansions of the original headers kept verbatim although they differ from the family rule:
/// (alias without `shmem_`, target without the prefix). The original defines
/// `shmem_put_double_mem_signal` as `aclshmem_doubl_put_signal` (a name nothing declares).
pub const ALIAS_QUIRKS: &[(&str, &str)] = &[("put_double_mem_signal", "doubl_put_signal")];
