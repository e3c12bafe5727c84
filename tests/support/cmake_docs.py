"""A small build-system reference corpus, written for the ``gno_context`` task tests.

Fourteen pages shaped like a CMake documentation tree: target properties,
variables, commands, a policy, two manuals, a tutorial step and release
notes. Several pages talk about C++ standards, flags and compilers, so a goal
such as "explain how CMake picks the C++ standard flag" has one right first
passage (the ``CXX_STANDARD`` property page) among many plausible ones. The
text is our own summary of how CMake behaves, not copied documentation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

CXX_STANDARD_PAGE: Final = "prop_tgt/CXX_STANDARD.md"

PAGES: Final[dict[str, str]] = {
    "prop_tgt/CXX_STANDARD.md": """\
# CXX_STANDARD

The C++ standard whose features are requested to build a target.

This target property names the C++ standard the target's sources are compiled
against. Supported values are `98`, `11`, `14`, `17` (CMake 3.8), `20`
(CMake 3.12), `23` (CMake 3.20) and `26` (CMake 3.25).

## How the standard flag is chosen

When a target sets `CXX_STANDARD`, CMake looks up the compile flag that
selects that standard for the compiler in use and adds it to the compile
line: `-std=c++17` or `-std=gnu++17` for GCC and Clang, `/std:c++17` for
MSVC. Whether the `gnu` or the strict form is used is decided by
`CXX_EXTENSIONS`. With policy `CMP0128` set to `NEW`, no flag is added at all
when the compiler's default standard already satisfies the request and
extensions match the compiler default.

If the requested standard has no flag for the compiler, CMake does not fail:
it decays to the newest earlier standard that the compiler does support, so a
request for `11` on a compiler that only knows `-std=gnu++98` adds that flag
instead, without an error or a warning. Set `CXX_STANDARD_REQUIRED` to `ON`
to turn the decay into a configure error.

Compile features can raise the level: when `target_compile_features` asks
for `cxx_std_20` on a target whose `CXX_STANDARD` is `17`, the higher of the
two wins and the C++20 flag is used.

## Initialisation

The property is initialised from the `CMAKE_CXX_STANDARD` variable when the
target is created, so setting that variable at the top of a project gives
every later target the same standard.

```cmake
add_library(geometry STATIC shapes.cpp)
set_property(TARGET geometry PROPERTY CXX_STANDARD 17)
```

See the `cmake-compile-features(7)` manual for the full model.
""",
    "prop_tgt/CXX_STANDARD_REQUIRED.md": """\
# CXX_STANDARD_REQUIRED

Boolean describing whether the value of `CXX_STANDARD` is a requirement.

When this property is `ON`, the `CXX_STANDARD` target property is treated as
a hard requirement: if the compiler in use cannot compile in that standard,
configuring the project fails with an error naming the target. When it is
`OFF` or unset, the standard is a request that may decay to an earlier one.

The property is initialised from the `CMAKE_CXX_STANDARD_REQUIRED` variable
when a target is created.

```cmake
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
```
""",
    "prop_tgt/CXX_EXTENSIONS.md": """\
# CXX_EXTENSIONS

Boolean specifying whether compiler-specific extensions are requested.

This property decides which of the two spellings of a standard flag a target
gets. For GCC and Clang, `ON` produces `-std=gnu++17` and `OFF` produces
`-std=c++17`. Compilers without a separate extension mode ignore it.

Before CMake 3.22 the default was `ON` for every compiler. Since 3.22, under
policy `CMP0128`, the default comes from `CMAKE_CXX_EXTENSIONS_DEFAULT`, the
compiler's own behaviour detected when the language is enabled.

The property is initialised from the `CMAKE_CXX_EXTENSIONS` variable when a
target is created. Projects that want portable code usually set it to `OFF`
once, at the top of the project.
""",
    "variable/CMAKE_CXX_STANDARD.md": """\
# CMAKE_CXX_STANDARD

Default value for the `CXX_STANDARD` property of targets.

This variable initialises `CXX_STANDARD` on every target created after it is
set. It is also used by `try_compile` checks, so feature tests run with the
same standard as the project.

Setting the variable is the usual way for a whole project to agree on one
standard:

```cmake
cmake_minimum_required(VERSION 3.20)
project(Atlas LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
```

A value given on the command line (`-DCMAKE_CXX_STANDARD=20`) overrides a
default that the project sets only when it is not yet defined.
""",
    "variable/CMAKE_CXX_FLAGS.md": """\
# CMAKE_CXX_FLAGS

Language-wide flags for C++ used when building for all configurations.

The contents are added to the compile line of every C++ source in the
directory and below, before the flags of the active configuration
(`CMAKE_CXX_FLAGS_DEBUG`, `CMAKE_CXX_FLAGS_RELEASE` and so on).

Putting a standard switch such as `-std=c++17` into this variable by hand
works for one compiler but fights with the flag CMake adds from
`CXX_STANDARD`: the compile line then carries two conflicting switches and
the last one wins. Prefer the standard properties or compile features.

The variable is meant for the user building the project, for example to add
warnings or sanitizers from a toolchain file or the command line, rather
than for project code.
""",
    "command/target_compile_features.md": """\
# target_compile_features

Add expected compiler features to a target.

```cmake
target_compile_features(<target> <PRIVATE|PUBLIC|INTERFACE> <feature> [...])
```

Specifies compiler features required when compiling a given target. If a
feature is not listed in the `CMAKE_CXX_COMPILE_FEATURES` variable, CMake
reports an error and the target is not built. When a feature requires a
newer standard than the target otherwise uses, CMake adds the flag for that
standard automatically.

The meta-features `cxx_std_11`, `cxx_std_14`, `cxx_std_17`, `cxx_std_20`,
`cxx_std_23` and `cxx_std_26` request a whole language level at once and are
the recommended form. `PUBLIC` and `INTERFACE` features become usage
requirements: consumers of the target are compiled with at least that
standard too.

```cmake
add_library(parser parser.cpp)
target_compile_features(parser PUBLIC cxx_std_20)
```
""",
    "command/target_compile_options.md": """\
# target_compile_options

Add compile options to a target.

```cmake
target_compile_options(<target> [BEFORE] <INTERFACE|PUBLIC|PRIVATE> [items1...])
```

Adds options to the `COMPILE_OPTIONS` or `INTERFACE_COMPILE_OPTIONS` target
properties. These options are used when compiling the given target, which
must have been created by a command such as `add_executable` or
`add_library`.

Options are de-duplicated: the final set keeps the first occurrence of each
option. A group of options that must stay together can be protected with the
`SHELL:` prefix, for example `"SHELL:-Xclang -fno-inline"`.

This command is the right place for warnings (`-Wall`, `/W4`) and
optimisation switches. The language standard is better expressed with
`target_compile_features` or `CXX_STANDARD`, which know the right spelling
for every supported compiler.
""",
    "command/add_compile_options.md": """\
# add_compile_options

Add options to the compilation of source files.

```cmake
add_compile_options(<option> ...)
```

Adds options to the `COMPILE_OPTIONS` directory property. These options are
used when compiling targets from the current directory and below. Generator
expressions can limit an option to one compiler:

```cmake
add_compile_options($<$<CXX_COMPILER_ID:MSVC>:/permissive->)
```

Options added here apply to every language in the directory; use
`$<COMPILE_LANGUAGE:CXX>` to keep a C++-only option away from C sources.
""",
    "command/project.md": """\
# project

Set the name of the project.

```cmake
project(<PROJECT-NAME> [VERSION <major>[.<minor>]] [LANGUAGES <language-name>...])
```

Sets the name of the project and stores it in `PROJECT_NAME`. When called
from the top-level `CMakeLists.txt` it also sets `CMAKE_PROJECT_NAME`.

The `LANGUAGES` option selects the languages needed to build the project.
Each language is enabled in turn: CMake finds its compiler, identifies it
(`CMAKE_CXX_COMPILER_ID`, `CMAKE_CXX_COMPILER_VERSION`) and records which
features and standards it supports. By default `C` and `CXX` are enabled.

The `VERSION` option sets `PROJECT_VERSION` and its components, which are
commonly used for package configuration files and generated headers.
""",
    "policy/CMP0128.md": """\
# CMP0128

When this policy is set to `NEW`, CMake adds a language standard flag only
when one is needed.

CMake 3.21 and below always added the flag for the requested standard and
treated `CXX_EXTENSIONS` as `ON` unless the project said otherwise. The
`NEW` behaviour, introduced in CMake 3.22, does three things:

* the default of `CXX_EXTENSIONS` is the compiler's own default, read from
  `CMAKE_CXX_EXTENSIONS_DEFAULT`;
* no standard flag is added when the compiler's default standard already
  satisfies the requested `CXX_STANDARD` and extensions already match;
* a flag is added when extensions are requested differently from the
  compiler default, even if the standard level itself needs none.

The `OLD` behaviour keeps the 3.21 rules. This policy was introduced in CMake
version 3.22; `cmake_minimum_required(VERSION 3.22)` sets it to `NEW`.
""",
    "manual/cmake-compile-features.7.md": """\
# cmake-compile-features(7)

## Introduction

Project source code may depend on, or be conditional on, the availability of
certain features of the compiler. Three use cases arise: compile feature
requirements, optional compile features and conditional compilation
options. CMake records which features each known compiler supports, in the
`CMAKE_CXX_KNOWN_FEATURES` global property, when the language is enabled.

## Compile Feature Requirements

Compile feature requirements may be specified with the
`target_compile_features` command. For example, if a target must be compiled
with compiler support for the `cxx_constexpr` feature:

```cmake
add_library(mylib requires_constexpr.cpp)
target_compile_features(mylib PRIVATE cxx_constexpr)
```

In processing the requirement for the `cxx_constexpr` feature, CMake ensures
that the compiler in use is capable of the feature, and adds any necessary
flags such as `-std=gnu++11` to the compile lines of C++ files in the
`mylib` target. A `FATAL_ERROR` is issued if the compiler is not capable of
the feature.

The exact compile flags and language standard are deliberately not part of
the user interface for this use case. CMake computes the most appropriate
compile flags to use for the requested features.

## Requiring Language Standards

In projects that use a large number of commonly available features from a
particular language standard, it may be easier to require the standard
itself with a meta-feature such as `cxx_std_17`. Meta-features exist for
every standard level and are always known, even to compilers for which
CMake records no individual features.

## Availability of Compiler Extensions

The `CXX_EXTENSIONS` target property decides whether a compiler's
extensions are enabled. When the property is not set, the value of
`CMAKE_CXX_EXTENSIONS` is used, and when that is not set either, the
compiler default applies under policy `CMP0128`.

## Optional Compile Features

Compile features may be preferred if available, without creating a hard
requirement. Such code is written with a fallback and a generator expression
or a configured header decides which branch is compiled:

```cmake
target_compile_definitions(mylib PRIVATE
  $<$<COMPILE_FEATURES:cxx_override>:HAVE_OVERRIDE=1>)
```

## Conditional Compilation Options

Libraries may provide entirely different header files depending on
requested compiler features, with the `COMPILE_FEATURES` generator
expression in `target_include_directories` or `target_sources`.

## Supported Compilers

CMake knows the features of recent versions of GCC, Clang, AppleClang, MSVC,
the Intel oneAPI compilers and a few others. For any other compiler only the
meta-features are known, and requesting one adds no flag: the compiler's
default standard is assumed to be good enough.
""",
    "manual/cmake-buildsystem.7.md": """\
# cmake-buildsystem(7)

## Introduction

A CMake-based buildsystem is organised as a set of high-level logical
targets. Each target corresponds to an executable or library, or is a custom
target containing custom commands. Dependencies between the targets are
expressed in the buildsystem to determine the build order and the rules for
regeneration in response to change.

## Binary Targets

Executables and libraries are defined using the `add_executable` and
`add_library` commands. The resulting binary files have appropriate
prefixes, suffixes and extensions for the platform targeted. Dependencies
between binary targets are expressed using `target_link_libraries`.

## Build Specification and Usage Requirements

The `target_include_directories`, `target_compile_definitions` and
`target_compile_options` commands specify the build specification and the
usage requirements of binary targets. The commands populate the
`INCLUDE_DIRECTORIES`, `COMPILE_DEFINITIONS` and `COMPILE_OPTIONS` target
properties respectively, and their `INTERFACE_` variants.

Each command has `PRIVATE`, `PUBLIC` and `INTERFACE` modes. The `PRIVATE`
mode populates only the non-`INTERFACE_` variant of the target property and
the `INTERFACE` mode populates only the `INTERFACE_` variants. The `PUBLIC`
mode populates both variants of the respective target property.

Usage requirements propagate transitively: a consumer of a library that
lists a definition as `PUBLIC` is compiled with that definition as well.

## Compatible Interface Properties

Some target properties must agree between a target and the interface of each
dependency. For example `POSITION_INDEPENDENT_CODE` is a boolean that CMake
checks across the link graph and reports when two dependencies disagree.

## Build Configurations

Configurations determine specifications for a certain type of build, such as
`Release` or `Debug`. Single-configuration generators read
`CMAKE_BUILD_TYPE`; multi-configuration generators such as Visual Studio and
Ninja Multi-Config build every configuration from one tree.
""",
    "guide/tutorial/step1.md": """\
# Step 1: A Basic Starting Point

The most basic project is an executable built from source code files. For a
simple project, a three-line `CMakeLists.txt` file is all that is required.

```cmake
cmake_minimum_required(VERSION 3.15)
project(Tutorial)
add_executable(Tutorial tutorial.cxx)
```

## Exercise: Adding a Version Number and Configured Header File

The first feature we will add is a version number for our executable and
project. We set it in `project()` and pass it to the source code through a
header that CMake configures from a template.

## Exercise: Specify the Language Level

Next let's add some newer language features to the project by replacing
`atof` with `std::stod` in `tutorial.cxx`. The easiest way to enable support
for a specific language level is by setting `CMAKE_CXX_STANDARD` before the
call to `add_executable`:

```cmake
set(CMAKE_CXX_STANDARD 11)
set(CMAKE_CXX_STANDARD_REQUIRED True)
```

Rebuild the project and run it again to check that the new code compiles.
""",
    "release/3.22.md": """\
# CMake 3.22 Release Notes

## New Features

* The `CMAKE_BUILD_TYPE` environment variable initialises the variable of the
  same name when a build tree is first configured.
* The `cmake_host_system_information` command can query the operating system
  distribution.
* Compilers now report their default extension mode in
  `CMAKE_<LANG>_EXTENSIONS_DEFAULT`.

## Policies

* Policy `CMP0128` changes how language standard and extension flags are
  computed; see its page for details.

## Deprecated and Removed Features

* Compatibility with versions of CMake older than 2.8.12 is now deprecated
  and will be removed from a future version.
""",
}


def write_pages(root: Path) -> Path:
    """Write the corpus under ``root`` and return ``root``."""
    for relative, text in PAGES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
