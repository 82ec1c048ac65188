"""Module 04, modules: walking the module tree (named_modules, named_parameters, state_dict
keys), including shared submodules and parameters, against torch."""
import torch

import ember

from . import check, same


def _model(L):
    nn = L.nn
    shared = nn.Linear(3, 3)
    model = nn.Sequential(nn.Linear(2, 3), nn.Sequential(shared, nn.ReLU(), shared),
                          nn.ModuleDict({"head": nn.Linear(3, 1), "norm": nn.LayerNorm(3)}))
    model.extra = nn.Parameter(L.zeros(2))
    model.tied = nn.Linear(3, 3)
    model.tied.weight = model[1][0].weight  # a parameter shared by two different modules
    return model


def _names(pairs):
    return [name for name, _ in pairs]



@check("04/named-modules", points=2)
def named_modules():
    e, t = _model(ember), _model(torch)
    same("named_modules() names", _names(e.named_modules()), _names(t.named_modules()))
    same("named_modules(remove_duplicate=False) names", _names(e.named_modules(remove_duplicate=False)),
         _names(t.named_modules(remove_duplicate=False)))
    same("named_modules(prefix='net') names", _names(e.named_modules(prefix="net")),
         _names(t.named_modules(prefix="net")))


@check("04/named-members", points=2)
def named_members():
    e, t = _model(ember), _model(torch)
    same("named_parameters() names", _names(e.named_parameters()), _names(t.named_parameters()))
    same("named_parameters(recurse=False) names", _names(e.named_parameters(recurse=False)),
         _names(t.named_parameters(recurse=False)))
    same("named_parameters(remove_duplicate=False) names",
         _names(e.named_parameters(remove_duplicate=False)), _names(t.named_parameters(remove_duplicate=False)))
    same("named_buffers() names", _names(e.named_buffers()), _names(t.named_buffers()))
    same("number of parameters()", len(list(e.parameters())), len(list(t.parameters())))
